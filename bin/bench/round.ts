import { performance } from 'node:perf_hooks';
import { GCProfiler } from 'node:v8';
import { createMemoryStore, createRuntime, type AnyMachineDefinition, type Runtime, type SessionStore } from '@flowing/runtime';
import { ensureTypeScriptLoader } from '../typescript-loader.ts';
import { benchProvider } from './model.ts';
import { benchRedis, benchSqlite, captureCommits, commitAs, type BenchStore } from './stores.ts';
import { bareXState, handWritten, withRuntime } from './workload.ts';

/** The cases, as printed; the parent computes ratios against `bare`. */
export const CASE_NAMES = {
  handWritten: '(a) hand-written async',
  bare: '(b) bare XState',
  memory: '(c) Flowing, memory store',
  sqlite: '(d) Flowing, SQLite',
  redis: '(e) Flowing, Redis',
  sqliteAlone: '(f) SQLite store alone',
} as const;

export type CaseId = keyof typeof CASE_NAMES;

/** What the parent asks of one child: one case, timed. */
export interface RoundConfig {
  case: CaseId;
  /** Sessions timed. */
  sessions: number;
  /** Untimed sessions first, so the case runs optimised code (V8 takes some 2,000 sessions to settle bare XState). */
  warmup: number;
  /** Redis store URL, for the Redis case. */
  redisUrl?: string;
  /** Sessions in flight at once (default 1: one after another). */
  concurrency?: number;
}

/** One case's figures in one round, or why it could not run. */
export type CaseFigure =
  | {
      /** Wall time per session, µs. */
      us: number;
      /** CPU time (user + system, all threads) per session, µs: less disturbed by other processes than wall time. */
      cpuUs: number;
      /** Time in garbage collection per session, µs (V8's GCProfiler). */
      gcUs: number;
    }
  | { skipped: string };

/** Sessions per chunk; each runtime case starts a fresh runtime between chunks, untimed. */
const CHUNK = 100;

interface Runner {
  run: () => Promise<unknown>;
  /** A fresh runtime, so sessions of earlier chunks do not pile up in the heap being timed. */
  reset: () => void;
  close: () => Promise<void>;
}

function runtimeRunner(definition: AnyMachineDefinition, store: () => SessionStore, opened?: BenchStore): Runner {
  const fresh = (): Runtime => createRuntime({ machines: [definition], store: store(), llm: benchProvider() });
  let runtime = fresh();
  return {
    run: () => withRuntime(runtime, definition),
    reset: () => {
      runtime = fresh();
    },
    close: async () => opened?.close(),
  };
}

async function runnerFor(config: RoundConfig, definition: AnyMachineDefinition): Promise<Runner | string> {
  const plain = (run: () => Promise<unknown>): Runner => ({ run, reset: () => {}, close: async () => {} });
  switch (config.case) {
    case 'handWritten':
      return plain(() => handWritten(definition.tools));
    case 'bare':
      return plain(() => bareXState(definition));
    case 'memory':
      return runtimeRunner(definition, () => createMemoryStore());
    case 'sqlite': {
      const sqlite = await benchSqlite();
      return typeof sqlite === 'string' ? sqlite : runtimeRunner(definition, () => sqlite.store, sqlite);
    }
    case 'sqliteAlone': {
      // The floor under (d): a session's commits, as the runtime made them, written straight to the store.
      const commits = await captureCommits((store) =>
        withRuntime(createRuntime({ machines: [definition], store, llm: benchProvider() }), definition),
      );
      const sqlite = await benchSqlite();
      if (typeof sqlite === 'string') return sqlite;
      let n = 0;
      return {
        run: async () => {
          const sessionId = `alone-${++n}`;
          for (const commit of commits) await sqlite.store.commit(commitAs(commit, sessionId));
        },
        reset: () => {},
        close: () => sqlite.close(),
      };
    }
    case 'redis': {
      if (!config.redisUrl) return 'no Redis URL';
      const redis = await benchRedis(config.redisUrl);
      return typeof redis === 'string' ? redis : runtimeRunner(definition, () => redis.store, redis);
    }
  }
}

/** Runs `count` sessions, `concurrency` of them in flight at any moment. */
async function runMany(runner: Runner, count: number, concurrency: number): Promise<void> {
  if (concurrency <= 1) {
    for (let i = 0; i < count; i++) await runner.run();
    return;
  }
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      await runner.run();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** Warms up and times one case in this process (the parent runs every case of every round in a new process). */
export async function runRound(config: RoundConfig): Promise<CaseFigure> {
  await ensureTypeScriptLoader();
  const { loadMachine } = await import('../run/load.ts');
  const definition = await loadMachine('order-support');
  const runner = await runnerFor(config, definition);
  if (typeof runner === 'string') return { skipped: runner };
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  try {
    const concurrency = config.concurrency ?? 1;
    for (let i = 0; i < config.warmup; i += CHUNK) {
      runner.reset();
      await runMany(runner, Math.min(CHUNK, config.warmup - i), concurrency);
    }
    let wall = 0;
    let cpu = 0;
    let inGc = 0;
    let done = 0;
    while (done < config.sessions) {
      const count = Math.min(CHUNK, config.sessions - done);
      runner.reset();
      gc();
      const profiler = new GCProfiler();
      profiler.start();
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      await runMany(runner, count, concurrency);
      wall += (performance.now() - start) * 1000;
      const used = process.cpuUsage(cpuStart);
      cpu += used.user + used.system;
      inGc += (profiler.stop()?.statistics ?? []).reduce((sum, entry) => sum + entry.cost, 0);
      done += count;
    }
    return { us: wall / done, cpuUs: cpu / done, gcUs: inGc / done };
  } finally {
    await runner.close();
  }
}
