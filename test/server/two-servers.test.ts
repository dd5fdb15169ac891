import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type AnyTool } from '@flowing/runtime';
import { createRedisStore, type RedisStore } from '@flowing/runtime/redis';
import { startServer, type RunningServer } from '@flowing/runtime/server';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { followSse, readSse } from './sse-client.ts';

let redis: TestRedis;
const stores: RedisStore[] = [];
const servers: RunningServer[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const server of servers) await server.close();
  for (const store of stores) await store.close();
  await redis?.stop();
});

/** One server process's worth: its own runtime and Redis connections, on the shared Redis. */
async function startOnRedis(tool: AnyTool = gateTool().tool): Promise<RunningServer> {
  const store = createRedisStore({ url: redis.url, prefix: 'two-servers:' });
  stores.push(store);
  const runtime = createRuntime({ machines: [refusalMachine(tool)], store });
  const server = await startServer(runtime, { port: 0, log: () => {}, rateLimit: { client: false, session: false } });
  servers.push(server);
  return server;
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', body: JSON.stringify(body), headers }).then(async (r) => ({ status: r.status, body: await r.json() }));

/** A `wait` tool that returns at once and counts its runs in `runs` (shared by both servers' tools). */
function countingWait(runs: { count: number }): AnyTool {
  return defineTool({
    name: 'wait',
    description: 'returns at once',
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    async run() {
      runs.count++;
      return { ok: true };
    },
  });
}

describe('runtime server: two servers on one Redis', () => {
  it('streams on A the events applied through B, and B continues a stream begun on A after Last-Event-ID', async () => {
    const a = await startOnRedis();
    const b = await startOnRedis();
    const created = await post(`${a.url}/sessions`, { machine: 'refusals' });
    const id = created.body.sessionId as string;

    const onA = readSse(`${a.url}/sessions/${id}/stream`, {
      until: (r) => r.events.some((e) => e.event === 'transition.rejected' && Number(e.id) >= 7),
    });
    for (let i = 0; i < 5; i++) expect((await post(`${b.url}/sessions/${id}/events`, { type: 'PING' })).status).toBe(409);
    const firstPart = await onA;
    const lastOnA = firstPart.events.at(-1)!.id!;

    for (let i = 0; i < 5; i++) await post(`${a.url}/sessions/${id}/events`, { type: 'PING' });
    await post(`${a.url}/sessions/${id}/events`, { type: 'FINISH' });
    const { events: rest } = await followSse(`${b.url}/sessions/${id}/stream`, { headers: { 'last-event-id': lastOnA } });

    const log = (await (await fetch(`${b.url}/sessions/${id}/events`)).json()).events as Array<{ seq: number }>;
    const seen = [...firstPart.events, ...rest].map((e) => Number(e.id));
    expect(seen).toEqual(log.map((e) => e.seq));
    expect(log.map((e) => e.seq)).toEqual(log.map((_e, i) => i + 1));
  });

  it('applies an event once when the same Idempotency-Key is POSTed to both servers at once, and answers both alike', async () => {
    const runs = { count: 0 };
    const a = await startOnRedis(countingWait(runs));
    const b = await startOnRedis(countingWait(runs));
    const id = (await post(`${a.url}/sessions`, { machine: 'refusals' })).body.sessionId as string;
    const key = { 'idempotency-key': 'order-7-retry' };
    const answers = await Promise.all([
      post(`${a.url}/sessions/${id}/events`, { type: 'GO', n: 2 }, key),
      post(`${b.url}/sessions/${id}/events`, { type: 'GO', n: 2 }, key),
      post(`${b.url}/sessions/${id}/events`, { n: 2, type: 'GO' }, key),
    ]);
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200]);
    expect(runs.count).toBe(1);
    const [first, ...repeats] = answers.map((x) => x.body);
    const original = [first, ...repeats].find((x) => !x.duplicate);
    for (const x of [first, ...repeats]) expect({ ...x, duplicate: undefined }).toEqual({ ...original, duplicate: undefined });
    expect([first, ...repeats].filter((x) => x.duplicate)).toHaveLength(2);
    const log = (await (await fetch(`${a.url}/sessions/${id}/events`)).json()).events as Array<{ type: string; data: { event?: string } }>;
    expect(log.filter((e) => e.type === 'state.changed' && e.data.event === 'GO')).toHaveLength(1);

    const reused = await post(`${a.url}/sessions/${id}/events`, { type: 'GO', n: 3 }, key);
    expect(reused.status).toBe(409);
    expect(reused.body).toMatchObject({ applied: false, code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(runs.count).toBe(1);
  });
});
