import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '@flowing/runtime';
import { createRedisStore, type RedisStore } from '@flowing/runtime/redis';
import { startServer, type RunningServer } from '@flowing/runtime/server';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis | undefined;
let store: RedisStore | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  await store?.close();
  await redis?.stop();
  server = store = redis = undefined;
});

async function timed(url: string, init?: RequestInit) {
  const started = performance.now();
  const response = await fetch(url, init);
  const body = await response.json();
  return { status: response.status, body, ms: performance.now() - started };
}

/** Driver phrases that must never reach a client (they say nothing to it and expose internals). */
const DRIVER_TEXT = /max retries|MaxRetriesPerRequest|Command timed out|ECONNREFUSED|Connection is closed|ioredis|Stream isn't writeable/i;

describe('runtime server: Redis unavailable', () => {
  it('answers 503 STORE_UNAVAILABLE within 1 s, /readyz 503 within 1 s, no pile-up, and serves again once Redis is back', async () => {
    redis = await startRedis();
    store = createRedisStore({ url: redis.url, prefix: 'down:' });
    const runtime = createRuntime({ machines: [refusalMachine(gateTool().tool)], store });
    server = await startServer(runtime, { port: 0, log: () => {}, rateLimit: { client: false, session: false } });
    await server.recovered;
    const created = await timed(`${server.url}/sessions`, { method: 'POST', body: JSON.stringify({ machine: 'refusals' }) });
    const id = created.body.sessionId as string;
    const port = redis.port;
    await redis.kill();

    const event = () => timed(`${server!.url}/sessions/${id}/events`, { method: 'POST', body: JSON.stringify({ type: 'PING' }) });
    const single = await event();
    expect(single.status).toBe(503);
    expect(single.body.code).toBe('STORE_UNAVAILABLE');
    expect(single.body.message).not.toMatch(DRIVER_TEXT);
    expect(single.ms).toBeLessThan(1_000);
    const ready = await timed(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.ms).toBeLessThan(1_000);
    // Twenty at once while it stays down: nothing queues behind the dead connection (each waited 20 s before); the
    // bound leaves room for twenty requests' worth of CPU on a loaded machine.
    const burst = await Promise.all(Array.from({ length: 20 }, event));
    expect(burst.map((r) => r.status)).toEqual(burst.map(() => 503));
    expect(Math.max(...burst.map((r) => r.ms))).toBeLessThan(2_000);
    const reads = await Promise.all(Array.from({ length: 5 }, () => timed(`${server!.url}/sessions/${id}`)));
    expect(reads.map((r) => [r.status, r.body.message.match(DRIVER_TEXT)?.[0] ?? null])).toEqual(reads.map(() => [503, null]));
    expect(Math.max(...reads.map((r) => r.ms))).toBeLessThan(2_000);

    // Back on the same port (no persistence: the session is gone, and the store says so).
    redis = await startRedis(undefined, { port });
    let answer = await event();
    for (let i = 0; i < 50 && answer.status === 503; i++) answer = await event();
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('SESSION_NOT_FOUND');
    expect((await timed(`${server.url}/readyz`)).status).toBe(200);
  });

  it('answers /readyz 503 within 1 s while Redis is connected but does not answer (paused)', async () => {
    redis = await startRedis();
    store = createRedisStore({ url: redis.url, prefix: 'paused:' });
    const runtime = createRuntime({ machines: [refusalMachine(gateTool().tool)], store });
    server = await startServer(runtime, { port: 0, log: () => {} });
    await server.recovered;
    expect((await timed(`${server.url}/readyz`)).status).toBe(200);
    redis.process.kill('SIGSTOP');
    try {
      const ready = await timed(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ ok: false, code: 'SERVER_NOT_READY' });
      expect(ready.ms).toBeLessThan(1_000);
    } finally {
      redis.process.kill('SIGCONT');
    }
  });
});
