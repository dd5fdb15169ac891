import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { seededRandom } from '../helpers/seeded.ts';
import { createBackend, STORE_KINDS, type StoreBackend } from '../helpers/stores.ts';
import { startTestServer, type TestServer } from './harness.ts';
import { followSse } from './sse-client.ts';
import { startCuttingProxy } from './tcp-proxy.ts';

let server: TestServer | undefined;
let backend: StoreBackend | undefined;
let redis: TestRedis | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await backend?.remove();
  backend = undefined;
});

describe('runtime server: SSE resume through broken connections', () => {
  it.each(STORE_KINDS)(
    'delivers every event exactly once and in order when 30 connections are cut at random byte offsets (%s store)',
    async (kind) => {
      const seed = Number(process.env.FLOWING_TEST_SEED ?? Date.now() % 1_000_000);
      const random = seededRandom(seed);
      backend = await createBackend(kind, redis);
      server = await startTestServer([refusalMachine(gateTool().tool)], {
        heartbeatMs: 20,
        rateLimit: { client: false, session: false },
        runtime: { store: backend.open() },
      });
      const { body } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
      const session = server.runtime.session(body.sessionId);
      for (let i = 0; i < 300; i++) await session.send({ type: 'PING' });

      // Offsets from 0 (before the status line) to a few KB (mid-event, between events, inside a heartbeat).
      const proxy = await startCuttingProxy(server.port, (n) => (n < 30 ? Math.floor(random() * 6000) : undefined));
      try {
        const following = followSse(`http://127.0.0.1:${proxy.port}/sessions/${body.sessionId}/stream`);
        // Half the log is written while the client is cut and reconnecting.
        for (let i = 0; i < 300; i++) {
          await session.send({ type: 'PING' });
          if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5));
        }
        await session.send({ type: 'FINISH' });
        const { events, connections } = await following;

        const stored = await session.events();
        expect(proxy.cuts.length, `seed ${seed}`).toBe(30);
        expect(connections).toBeGreaterThanOrEqual(31);
        expect(
          events.map((e) => Number(e.id)),
          `seed ${seed}`,
        ).toEqual(stored.map((e) => e.seq));
        expect(events.map((e) => JSON.parse(e.data))).toEqual(JSON.parse(JSON.stringify(stored)));
      } finally {
        await proxy.close();
      }
    },
  );

  it('resumes from any Last-Event-ID with exactly the events after it (property)', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)], { rateLimit: { client: false, session: false } });
    const { body } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    const session = server.runtime.session(body.sessionId);
    for (let i = 0; i < 40; i++) await session.send({ type: 'PING' });
    await session.send({ type: 'FINISH' });
    const stored = await session.events();
    const last = stored.at(-1)!.seq;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: last - 1 }), async (after) => {
        const { events } = await followSse(`${server!.url}/sessions/${body.sessionId}/stream`, {
          headers: { 'last-event-id': String(after) },
        });
        expect(events.map((e) => Number(e.id))).toEqual(stored.filter((e) => e.seq > after).map((e) => e.seq));
      }),
      { numRuns: 25 },
    );
  });
});
