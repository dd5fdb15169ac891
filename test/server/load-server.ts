// The server process of the load tests (test/server/load*.test.ts): the order-support machine with the scripted
// model on a runtime server bound to 127.0.0.1:0, rate limits off, with the store named in argv[2] (`sqlite:FILE`
// or `memory`) and the SSE heartbeat of argv[3] ms. It prints `{ url }` when listening, then answers each line on
// stdin with one JSON line: `heap` -> the heap used after full GCs, `handles` -> the active resources by type (and
// the live intervals, unref'd ones included),
// `rss` -> the resident set size. Run with --expose-gc.
import { createInterface } from 'node:readline';
import { createMemoryStore, createRuntime, type SessionStore } from '@flowing/runtime';
import { startServer } from '@flowing/runtime/server';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';

const [storeArg = 'memory', heartbeatArg = '15000'] = process.argv.slice(2);
const store: SessionStore = storeArg.startsWith('sqlite:') ? createSqliteStore({ file: storeArg.slice('sqlite:'.length) }) : createMemoryStore();
const runtime = createRuntime({ machines: [orderSupport], store });
const server = await startServer(runtime, {
  port: 0, rateLimit: { client: false, session: false }, heartbeatMs: Number(heartbeatArg), log: () => {},
});
await server.recovered;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run the load server with --expose-gc');

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc!();
  }
  return process.memoryUsage().heapUsed;
}

// getActiveResourcesInfo() leaves out unref'd timers (the SSE heartbeat is one), so live intervals are counted here:
// a stream that forgot its heartbeat on disconnect shows up as one more `Interval`.
const liveIntervals = new Set<unknown>();
const realSetInterval = globalThis.setInterval;
const realClearInterval = globalThis.clearInterval;
const realClearTimeout = globalThis.clearTimeout;
globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
  const timer = realSetInterval(...args);
  liveIntervals.add(timer);
  return timer;
}) as typeof setInterval;
globalThis.clearInterval = ((timer?: Parameters<typeof clearInterval>[0]) => {
  liveIntervals.delete(timer);
  realClearInterval(timer);
}) as typeof clearInterval;
globalThis.clearTimeout = ((timer?: Parameters<typeof clearTimeout>[0]) => {
  liveIntervals.delete(timer);
  realClearTimeout(timer);
}) as typeof clearTimeout;

function handles(): Record<string, number> {
  const counts: Record<string, number> = { Interval: liveIntervals.size };
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

const answer = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
answer({ url: server.url });
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'heap') answer({ heap: await settledHeap() });
  else if (line === 'handles') answer({ handles: handles() });
  else if (line === 'rss') answer({ rss: process.memoryUsage().rss });
  else answer({ error: `unknown command ${line}` });
}
await server.close();
await store.close?.();
