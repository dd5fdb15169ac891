// The server process of the load tests (test/server/load*.test.ts): the order-support machine with the scripted
// model on a runtime server bound to 127.0.0.1:0, rate limits off, with the store named in argv[2] (`sqlite:FILE`
// or `memory`) and the SSE heartbeat of argv[3] ms. It prints `{ url }` when listening, then answers each line on
// stdin with one JSON line: `heap` -> the heap used after full GCs, `dataHeap` -> the same without V8's compiled
// code (see dataHeap), `handles` -> the active resources by type (and the live intervals, unref'd ones included),
// `rss` -> the resident set size. Run with --expose-gc.
import { createInterface } from 'node:readline';
import { getHeapSnapshot } from 'node:v8';
import { createMemoryStore, createRuntime, type SessionStore } from '@flowing/runtime';
import { startServer } from '@flowing/runtime/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
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

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc!();
  }
  return process.memoryUsage().heapUsed;
}

/**
 * The heap after full GCs less what V8 keeps for compiled code: bytecode, optimized code with its deoptimization
 * data, relocation info and source positions, feedback vectors (snapshot type `code`), and the weak lists of code
 * depending on object shapes. The optimizing tiers go on compiling the server's hot paths for thousands of requests
 * after any short warm-up, and that code (1.2-2.2 KB a session over 1,000 sessions in the runs measured) is not
 * memory an idle session holds; with the tiers off (--no-opt --no-maglev --no-sparkplug) the plain heap diff is
 * 2-57 B a session.
 */
async function dataHeap(): Promise<number> {
  await settledHeap();
  const chunks: string[] = [];
  for await (const chunk of getHeapSnapshot().setEncoding('utf8')) chunks.push(chunk as string);
  const snapshot = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  chunks.length = 0;
  const {
    node_fields: fields,
    node_types: [types],
  } = snapshot.snapshot.meta;
  const width = fields.length;
  const [type, name, size] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const { nodes, strings } = snapshot;
  let bytes = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const kind = types[nodes[i + type]!];
    // `native` and `synthetic` nodes are Node's objects outside the V8 heap (not in heapUsed either).
    if (kind === 'code' || kind === 'native' || kind === 'synthetic') continue;
    if (kind === 'hidden' && strings[nodes[i + name]!] === 'system / WeakArrayList') continue;
    bytes += nodes[i + size]!;
  }
  return bytes;
}

const intervals = countLiveIntervals();

function handles(): Record<string, number> {
  const counts: Record<string, number> = { Interval: intervals.live() };
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

const answer = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
answer({ url: server.url });
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'heap') answer({ heap: await settledHeap() });
  else if (line === 'dataHeap') answer({ dataHeap: await dataHeap() });
  else if (line === 'handles') answer({ handles: handles() });
  else if (line === 'rss') answer({ rss: process.memoryUsage().rss });
  else answer({ error: `unknown command ${line}` });
}
await server.close();
await store.close?.();
