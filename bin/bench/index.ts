import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadMachine } from '../run/load.ts';
import { createMemoryStore, createRuntime, type SessionStore } from '@flowing/runtime';
import { benchRedis, benchSqlite } from './stores.ts';
import { bareXState, handWritten, withRuntime } from './workload.ts';

const ROUNDS = 9;
const PER_ROUND = 200;
const WARMUP = 300;
const IDLE_SESSIONS = 10_000;

async function timePerSession(fn: () => Promise<unknown>, count: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await fn();
  return ((performance.now() - start) * 1000) / count;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * `npm run bench`: the order-support workload (instantaneous tools, scripted model) as (a) a hand-written async
 * function, (b) the generated machine on bare XState, (c) the Flowing runtime with the memory store, (d) with SQLite
 * and (e) with Redis (when a redis-server can be started or `REDIS_URL` is set), interleaved in rounds in one
 * process; then the heap retained per idle session in a child process. The last line is `runtime/xstate ratio: R`
 * (the memory store's).
 */
export async function benchCommand(options: { out?: (line: string) => void } = {}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const definition = await loadMachine('order-support');
  // A fresh runtime and store per round, so sessions of earlier rounds do not pile up in the heap being timed.
  let runtime = createRuntime({ machines: [definition], store: createMemoryStore() });
  const cases: Array<[string, () => Promise<unknown>, () => void]> = [
    ['(a) hand-written async', () => handWritten(definition.tools), () => {}],
    ['(b) bare XState', () => bareXState(definition), () => {}],
    ['(c) Flowing runtime', () => withRuntime(runtime, definition), () => { runtime = createRuntime({ machines: [definition], store: createMemoryStore() }); }],
  ];
  // The durable stores: the same runtime case with its commits going to SQLite (WAL, synchronous=FULL) and Redis.
  const sqlite = await benchSqlite();
  const redis = await benchRedis();
  const durable: Array<[string, SessionStore]> = [];
  if (typeof sqlite !== 'string') durable.push(['(d) Flowing + SQLite', sqlite.store]);
  if (typeof redis !== 'string') durable.push(['(e) Flowing + Redis', redis.store]);
  for (const [name, store] of durable) {
    let onStore = createRuntime({ machines: [definition], store });
    cases.push([name, () => withRuntime(onStore, definition), () => { onStore = createRuntime({ machines: [definition], store }); }]);
  }
  for (const [, fn] of cases) await timePerSession(fn, WARMUP);
  const samples = cases.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < cases.length; i++) {
      cases[i]![2]();
      samples[i]!.push(await timePerSession(cases[i]![1], PER_ROUND));
    }
  }
  const [a, b, c] = samples.map(median) as [number, number, number];
  out(`order-support session, ${ROUNDS} rounds x ${PER_ROUND} sessions, median µs/session (node ${process.version})`);
  for (let i = 0; i < cases.length; i++) out(`  ${cases[i]![0].padEnd(26)} ${median(samples[i]!).toFixed(1).padStart(9)} µs`);
  out(`  (c)/(a) ${(c / a).toFixed(2)}`);
  for (let i = 3; i < cases.length; i++) out(`  ${cases[i]![0].slice(0, 3)}/(b) ${(median(samples[i]!) / b).toFixed(2)}  (${cases[i]![0].slice(4)} / bare XState)`);
  if (typeof sqlite === 'string') out(`  (d) Flowing + SQLite: skipped, ${sqlite}`);
  else await sqlite.close();
  if (typeof redis === 'string') out(`  (e) Flowing + Redis: skipped, ${redis}`);
  else await redis.close();
  const heap = await childHeap();
  if (heap) {
    out(`idle sessions: ${IDLE_SESSIONS} waiting for input, ${heap.perSession.toFixed(0)} bytes retained per session (memory store: snapshot + log), ${heap.storeOnly} bytes as JSON`);
  } else {
    out('idle sessions: heap measurement failed (see stderr)');
  }
  out(`runtime/xstate ratio: ${(c / b).toFixed(2)}`);
  return 0;
}

function childHeap(): Promise<{ perSession: number; storeOnly: number } | undefined> {
  const api = import.meta.resolve('tsx/esm/api');
  const heap = new URL('./heap.ts', import.meta.url).href;
  const code = `const { tsImport } = await import(${JSON.stringify(api)});
const { measureIdleHeap } = await tsImport(${JSON.stringify(heap)}, import.meta.url);
process.stdout.write(JSON.stringify(await measureIdleHeap(${IDLE_SESSIONS})));`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', code], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('close', (code) => {
      try {
        resolve(code === 0 ? JSON.parse(text) : undefined);
      } catch {
        resolve(undefined);
      }
    });
  });
}
