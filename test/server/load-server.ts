// The server process of the load tests (test/server/load*.test.ts): the order-support machine with the scripted
// model on a runtime server bound to 127.0.0.1:0, rate limits off, with the store named in argv[2] (`sqlite:FILE`
// or `memory`) and the SSE heartbeat of argv[3] ms. It prints `{ url }` when listening, then answers each line on
// stdin with one JSON line: `heap` -> the heap used after full GCs, `dataHeap` -> the same without V8's compiled
// code (see dataHeap), `handles` -> the active resources by type (and the live intervals, unref'd ones included),
// `rss` -> the resident set size. Run with --expose-gc.
import { createInterface } from 'node:readline';
import { createMemoryStore, createRuntime, type SessionStore } from '@flowing/runtime';
import { startServer } from '@flowing/runtime/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { dataHeap, settledHeap } from '../../bin/bench/retained-heap.ts';
import { countLiveIntervals } from '../helpers/live-intervals.ts';
import { openStore } from '../helpers/store-spec.ts';

const [storeArg = 'memory', heartbeatArg = '15000'] = process.argv.slice(2);
const store: SessionStore = storeArg === 'memory' ? createMemoryStore() : openStore(storeArg);
const runtime = createRuntime({ machines: [orderSupport], store });
const server = await startServer(runtime, {
  port: 0,
  rateLimit: { client: false, session: false },
  heartbeatMs: Number(heartbeatArg),
  log: () => {},
});
await server.recovered;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run the load server with --expose-gc');

const LOAD_GC_PAUSE_MS = 20;

const intervals = countLiveIntervals();

function handles(): Record<string, number> {
  const counts: Record<string, number> = { Interval: intervals.live() };
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

const answer = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
answer({ url: server.url });
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'heap') answer({ heap: await settledHeap(LOAD_GC_PAUSE_MS) });
  else if (line === 'dataHeap') answer({ dataHeap: await dataHeap(LOAD_GC_PAUSE_MS) });
  else if (line === 'handles') answer({ handles: handles() });
  else if (line === 'rss') answer({ rss: process.memoryUsage().rss });
  else answer({ error: `unknown command ${line}` });
}
await server.close();
await store.close?.();
