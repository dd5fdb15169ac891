import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type SessionStore } from '@flowing/runtime';
import { createRedisStore } from '@flowing/runtime/redis';
import { startServer, type RunningServer } from '@flowing/runtime/server';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { within } from '../helpers/wait.ts';
import { readSse } from './sse-client.ts';

let server: RunningServer | undefined;
let store: SessionStore | undefined;
let redis: TestRedis | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  await store?.close?.();
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = store = redis = dir = undefined;
});

async function serve(on: SessionStore, heartbeatMs?: number) {
  store = on;
  const runtime = createRuntime({ machines: [refusalMachine(gateTool().tool)], store: on });
  server = await startServer(runtime, {
    port: 0,
    log: () => {},
    rateLimit: { client: false, session: false },
    ...(heartbeatMs ? { heartbeatMs } : {}),
  });
  await server.recovered;
  return server;
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe('runtime server: streams that cannot go on end with a typed error event', () => {
  it('ends the stream of a session with a damaged event row with an error naming the seq, and refuses its writes', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowing-damaged-'));
    const file = join(dir, 'sessions.db');
    const s = await serve(createSqliteStore({ file }));
    const id = (await post(`${s.url}/sessions`, { machine: 'refusals' })).body.sessionId as string;
    for (let i = 0; i < 2; i++) expect((await post(`${s.url}/sessions/${id}/events`, { type: 'PING' })).status).toBe(409);
    const other = (await post(`${s.url}/sessions`, { machine: 'refusals' })).body.sessionId as string;
    const raw = new Database(file);
    const rows = () => (raw.prepare('SELECT count(*) AS n FROM events WHERE session_id = ?').get(id) as { n: number }).n;
    raw.prepare("UPDATE events SET body = replace(body, 'PING', 'PONG') WHERE session_id = ? AND seq = 3").run(id);
    const logged = rows();

    const read = await within(readSse(`${s.url}/sessions/${id}/stream`), 10_000, 'the stream to end');
    expect(read.complete).toBe(true);
    expect(read.events.map((e) => [e.event, e.id ?? null])).toEqual([
      ['session.started', '1'],
      ['state.changed', '2'],
      ['error', null],
    ]);
    const error = JSON.parse(read.events.at(-1)!.data);
    expect(error).toMatchObject({ code: 'FLOW_STORE_CORRUPT', seq: 3 });
    expect(error.message).toContain(`event 3 of session '${id}'`);

    const refused = await post(`${s.url}/sessions/${id}/events`, { type: 'FINISH' });
    expect(refused.body).toMatchObject({ applied: false, code: 'FLOW_STORE_CORRUPT', details: { sessionId: id, seq: 3 } });
    expect(refused.status).toBe(500);
    expect(rows()).toBe(logged);
    // Other sessions are unaffected.
    expect((await post(`${s.url}/sessions/${other}/events`, { type: 'FINISH' })).status).toBe(200);
    raw.close();
  });

  it('ends the stream of a session that vanished from the store (Redis restarted without persistence)', async () => {
    redis = await startRedis();
    const s = await serve(createRedisStore({ url: redis.url, prefix: 'vanish:' }), 100);
    const id = (await post(`${s.url}/sessions`, { machine: 'refusals' })).body.sessionId as string;
    const port = redis.port;
    const reading = readSse(`${s.url}/sessions/${id}/stream`, {
      until: (r) => {
        // Once the stream has shown the session's first events, Redis restarts empty.
        if (r.events.length === 2 && !restarted) restarted = restart();
        return false;
      },
    });
    let restarted: Promise<void> | undefined;
    const restart = async () => {
      await redis!.kill();
      redis = await startRedis(undefined, { port });
    };
    const read = await within(reading, 15_000, 'the stream of the vanished session to end');
    await restarted;
    expect(read.complete).toBe(true);
    expect(read.events.map((e) => e.event)).toEqual(['session.started', 'state.changed', 'error']);
    expect(JSON.parse(read.events[2]!.data)).toMatchObject({ code: 'SESSION_NOT_FOUND', seq: 2 });
  });
});

describe('runtime server: /readyz and the write path', () => {
  it('answers 503 on /readyz while commits fail with SQLITE_FULL (a full disk), though reads still work', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowing-full-'));
    // The size cap makes the file full the way a full disk does: the same SQLITE_FULL on the same write path.
    const s = await serve(createSqliteStore({ file: join(dir, 'sessions.db'), maxBytes: 96 * 1024 }));
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    let created: { status: number; body: { code?: string; message?: string } } | undefined;
    for (let i = 0; i < 1_000; i++) {
      created = await post(`${s.url}/sessions`, { machine: 'refusals' });
      if (created.status !== 201) break;
    }
    expect(created).toMatchObject({ status: 503, body: { code: 'STORE_UNAVAILABLE' } });
    expect(created!.body.message).toContain('SQLITE_FULL');
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(503);
    const body = await ready.json();
    expect(body).toMatchObject({ ok: false, code: 'SERVER_NOT_READY' });
    expect(body.message).toMatch(/the sqlite store cannot write: its last commit failed \d+ s ago \(STORE_UNAVAILABLE: .*SQLITE_FULL/);
    expect((await fetch(`${s.url}/sessions`)).status).toBe(200);
  });
});
