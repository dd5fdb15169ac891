import { request, type ClientRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { JsonClient } from '../../bin/bench/http-client.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { startLoadServer, type LoadServer } from './load-process.ts';
import { parseSseResponse } from './sse-client.ts';

// L2 (RELIABILITY.md 4.6), scaled: 500 SSE clients on one server process for 30 s (the plan says 10 minutes) with
// the heartbeat shortened from 15 s to 1 s, so 30 s see as many heartbeats per client as 7.5 minutes would.
const CLIENTS = 500;
const SESSIONS = 100;
const HEARTBEAT_MS = 1_000;
const DURATION_MS = 30_000;
/** The plan's "no client waits > 20 s" is 1.33 intervals at 15 s; on a shared 2-core machine allow 5 intervals. */
const MAX_GAP_MS = 5 * HEARTBEAT_MS;

interface SseClient {
  heartbeats: number[];
  open: boolean;
  request: ClientRequest;
}

function openStream(url: string, sessionId: string): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const client: SseClient = { heartbeats: [], open: false, request: undefined as unknown as ClientRequest };
    client.request = request(`${url}/sessions/${sessionId}/stream`, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream of ${sessionId}: ${res.statusCode}`));
      client.open = true;
      parseSseResponse(res, { onComment: () => client.heartbeats.push(performance.now()) });
      res.on('close', () => {
        client.open = false;
      });
      resolve(client);
    });
    client.request.on('error', (error) => {
      if (!client.open) reject(error);
    });
    client.request.end();
  });
}

let server: LoadServer | undefined;
let redis: TestRedis | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('L2 (scaled): 500 SSE clients on one process', () => {
  it.each(['memory', 'Redis'] as const)(
    'sends every client its heartbeats for 30 s, keeps RSS flat, and is back to its open handles once all disconnect: %s store',
    async (kind) => {
      // On Redis every followed session is read from its stream by the store's feed, as a second process's events would be.
      server = await startLoadServer(kind === 'memory' ? 'memory' : `redis:${redis!.url}#l2-${process.pid}:`, HEARTBEAT_MS);
      const http = new JsonClient(server.url, 20);
      const ids: string[] = [];
      for (let i = 0; i < SESSIONS; i++) {
        const created = await http.post('/sessions', { machine: 'order-support', sessionId: `l2-${i}` });
        expect(created.status).toBe(201);
        ids.push(`l2-${i}`);
      }
      http.close();
      // One stream first: the Redis store opens its feed connection on the first follow and keeps it for the next ones.
      (await openStream(server.url, ids[0]!)).request.destroy();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const handlesBefore = await server.handles();

      const clients = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => openStream(server!.url, ids[i % SESSIONS]!)));
      const start = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const rssConnected = await server.rss();
      await new Promise((resolve) => setTimeout(resolve, DURATION_MS - 3_000));
      const rssEnd = await server.rss();
      const end = performance.now();
      const handlesConnected = await server.handles();

      for (const client of clients) client.request.destroy();
      // The server closes the dropped streams asynchronously: wait (up to 5 s) for its handles to be back at the
      // baseline; if they never are, the checks below fail with the counts as they are then.
      const running = server;
      const handlesAfter = await vi
        .waitFor(
          async () => {
            const handles = await running.handles();
            expect(handles).toEqual(handlesBefore);
            return handles;
          },
          { timeout: 5_000, interval: 100 },
        )
        .catch(() => running.handles());

      // The longest wait of each client for a heartbeat: from connecting to the first, between two, from the last to the end.
      const gaps = clients.map((c) => {
        const times = [start, ...c.heartbeats.filter((t) => t <= end), end];
        return Math.max(...times.slice(1).map((t, i) => t - times[i]!));
      });
      const counts = clients.map((c) => c.heartbeats.length);
      console.log(
        `L2 (scaled from 10 min, ${kind} store): ${CLIENTS} SSE clients on ${SESSIONS} sessions for ${(DURATION_MS / 1000).toFixed(0)} s, heartbeat ${HEARTBEAT_MS} ms: ` +
          `heartbeats per client ${Math.min(...counts)}-${Math.max(...counts)}, longest wait ${Math.max(...gaps).toFixed(0)} ms; ` +
          `RSS ${(rssConnected / 2 ** 20).toFixed(1)} MB after connecting, ${(rssEnd / 2 ** 20).toFixed(1)} MB at the end; ` +
          `sockets ${handlesBefore.TCPSocketWrap ?? 0} before, ${handlesConnected.TCPSocketWrap ?? 0} connected, ${handlesAfter.TCPSocketWrap ?? 0} after; ` +
          `intervals ${handlesBefore.Interval} before, ${handlesConnected.Interval} connected, ${handlesAfter.Interval} after`,
      );

      expect(clients.every((c) => c.open || c.heartbeats.length > 0)).toBe(true);
      expect(Math.min(...counts)).toBeGreaterThanOrEqual(DURATION_MS / HEARTBEAT_MS / 2);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(MAX_GAP_MS);
      expect(handlesConnected.TCPSocketWrap ?? 0).toBeGreaterThanOrEqual(CLIENTS);
      expect(handlesConnected.Interval).toBeGreaterThanOrEqual(handlesBefore.Interval! + CLIENTS);
      expect(rssEnd).toBeLessThanOrEqual(rssConnected * 1.2);
      // Back to its open handles: no kind of handle more than before (a timer pending at the first count may be gone).
      const grown = Object.entries(handlesAfter).filter(([kind, n]) => (n ?? 0) > ((handlesBefore as Record<string, number>)[kind] ?? 0));
      expect(grown).toEqual([]);
    },
    120_000,
  );
});
