import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '@flowing/runtime';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { loadMachine } from '../run/load.ts';
import { benchProvider } from './model.ts';
import { dataHeap, settledHeap } from './retained-heap.ts';
import { BENCH_MESSAGE } from './workload.ts';

// Loaded like `flowing run` loads it (from the project's machines/), so the CLI build never compiles a machine.
const orderSupport = await loadMachine('order-support');

/**
 * One order-support session of many turns on SQLite (each turn: classify, extract, three tools, generate): the time
 * of a turn and the heap the process retains after full GCs, at turns 10, 1,000 and 10,000. Flat figures mean a
 * turn costs the same however long the session is. Run with --expose-gc:
 * `node --expose-gc --conditions=@flowing/source --import tsx bin/bench/long-session.ts` (TURNS=10000, WINDOW=20, CHECKPOINTS=10,1000,10000).
 */
async function main() {
  const turns = Number(process.env.TURNS ?? 10_000);
  const window = Number(process.env.WINDOW ?? 20);
  const checkpoints = (process.env.CHECKPOINTS ?? '10,1000,10000')
    .split(',')
    .map(Number)
    .filter((n) => n <= turns);
  const dir = await mkdtemp(join(tmpdir(), 'flowing-long-session-'));
  const store = createSqliteStore({ file: join(dir, 'sessions.db') });
  const runtime = createRuntime({ machines: [orderSupport], store, llm: benchProvider() });
  const session = await runtime.createSession(orderSupport);
  const times: number[] = [];
  console.log('turn | median turn (ms, the turns up to it) | heap retained | heap without code');
  for (let turn = 1; turn <= turns; turn++) {
    const started = performance.now();
    const result = await session.send({ type: 'USER_MESSAGE', text: BENCH_MESSAGE });
    times.push(performance.now() - started);
    if (!result.applied) throw new Error(`turn ${turn} refused: ${result.code} ${result.message}`);
    if (checkpoints.includes(turn)) {
      const recent = times.slice(-Math.min(window, turn)).sort((a, b) => a - b);
      const median = recent[Math.floor(recent.length / 2)]!;
      const heap = await settledHeap();
      const data = await dataHeap();
      console.log(`${turn} | ${median.toFixed(2)} | ${(heap / 1024 / 1024).toFixed(2)} MB | ${(data / 1024 / 1024).toFixed(2)} MB`);
    }
  }
  const record = (await store.load(session.id))!;
  console.log(`log: ${record.seq} events, ${record.step} steps, ${record.logBytes ?? 0} bytes; status ${record.status}`);
  await store.close();
  await rm(dir, { recursive: true, force: true });
}

await main();
