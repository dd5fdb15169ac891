import type { ChildSessionsFigure } from './child-sessions.ts';
import { runChild } from './child.ts';
import { startBenchRedis } from './redis-server.ts';
import { CASE_NAMES, type CaseFigure, type CaseId, type RoundConfig } from './round.ts';
import { coldSection, memorySection } from './sections.ts';
import { median } from './stats.ts';

export interface BenchOptions {
  /** Rounds (default 5); every case of every round runs in a new child process. */
  rounds?: string;
  /** Sessions timed per case and round (default 300). */
  sessions?: string;
  /** Sessions in flight in the second table (default 32). */
  concurrency?: string;
  /** Untimed sessions per case before timing (default 2000, 600 for the durable stores). */
  warmup?: string;
  /** A Redis server to use instead of starting one. */
  redis?: string;
  /** Sessions each heap process keeps per kind (default 1000). */
  idle?: string;
  /** New processes per cold-start case (default 20). */
  cold?: string;
  out?: (line: string) => void;
}

/** Ratio of each case to bare XState that the issue sets as the target. */
const TARGETS: Readonly<Record<string, number>> = { [CASE_NAMES.memory]: 1.5, [CASE_NAMES.sqlite]: 2.5 };
/** The cases of the table with many sessions in flight: the hand-written loop has nothing to wait for there. */
const CONCURRENT_CASES: readonly CaseId[] = ['bare', 'memory', 'sqlite', 'sqliteAlone', 'redis'];

type Measured = Exclude<CaseFigure, { skipped: string }>;

function positive(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, not '${text}'`);
  return value;
}

/** Every case of every round in a new process, the order rotated per round so no case always runs first. */
async function measure(
  ids: readonly CaseId[],
  rounds: number,
  warmup: number | undefined,
  base: Omit<RoundConfig, 'case' | 'warmup'>,
): Promise<Map<CaseId, CaseFigure[]>> {
  const results = new Map<CaseId, CaseFigure[]>(ids.map((id) => [id, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[(i + round) % ids.length]!;
      if (id === 'redis' && !base.redisUrl) continue;
      const config: RoundConfig = {
        ...base,
        case: id,
        warmup: warmup ?? (id === 'sqlite' || id === 'sqliteAlone' || id === 'redis' ? 600 : 2_000),
      };
      results.get(id)!.push(await runChild<CaseFigure>('round-main', config));
    }
  }
  return results;
}

/** The figures of a case that ran (not skipped). */
function measuredOf(results: Map<CaseId, CaseFigure[]>, id: CaseId): Measured[] {
  return (results.get(id) ?? []).filter((f): f is Measured => !('skipped' in f));
}

/** One table: each case's medians and its ratios to (b) bare XState of the same table. */
function printTable(out: (line: string) => void, results: Map<CaseId, CaseFigure[]>, redisSkipped: string | undefined): void {
  const measured = (id: CaseId) => measuredOf(results, id);
  const figures = (id: CaseId, key: 'us' | 'cpuUs' | 'gcUs') => measured(id).map((f) => f[key]);
  const baseline = median(figures('bare', 'us'));
  const cpuBaseline = median(figures('bare', 'cpuUs'));
  out(
    `  ${'case'.padEnd(28)} ${'wall µs'.padStart(9)} ${'min-max'.padStart(13)} ${'ratio'.padStart(6)} ${'cpu µs'.padStart(9)} ${'ratio'.padStart(6)} ${'gc µs'.padStart(7)}  target (wall ratio)`,
  );
  for (const id of results.keys()) {
    const name = CASE_NAMES[id];
    const skipped = results.get(id)!.find((f): f is { skipped: string } => 'skipped' in f);
    if (id === 'redis' && redisSkipped) out(`  ${name}: skipped, ${redisSkipped}`);
    else if (skipped) out(`  ${name}: skipped, ${skipped.skipped}`);
    if (measured(id).length === 0) continue;
    const wall = figures(id, 'us');
    const value = median(wall);
    const cpu = median(figures(id, 'cpuUs'));
    const target = TARGETS[name];
    const ratio = value / baseline;
    const range = `${Math.min(...wall).toFixed(0)}-${Math.max(...wall).toFixed(0)}`;
    const verdict = target === undefined ? '' : `<= ${target}x: ${ratio <= target ? 'met' : 'missed'}`;
    out(
      `  ${name.padEnd(28)} ${value.toFixed(1).padStart(9)} ${range.padStart(13)} ${ratio.toFixed(2).padStart(6)} ${cpu.toFixed(1).padStart(9)} ${(cpu / cpuBaseline).toFixed(2).padStart(6)} ${median(figures(id, 'gcUs')).toFixed(1).padStart(7)}  ${verdict}`,
    );
  }
}

/**
 * `npm run bench`: the order-support workload (instantaneous tools, a model that answers at once) as (a) a
 * hand-written async function, (b) the generated machine on bare XState with plain `fromPromise` actors making the
 * same calls, (c) the Flowing runtime with the memory store, (d) with SQLite (WAL, synchronous=FULL, a temporary file)
 * and (e) with Redis (`--redis URL`, or a redis-server of its own; skipped with the reason when there is none); (f)
 * is the floor under (d): the commits one session makes, captured once, written straight to the SQLite store. First
 * one session at a time (the latency of a session, where SQLite waits for each fsync), then `--concurrency` sessions
 * in flight (the throughput of a service, where SQLite's group commit shares an fsync). Every case of every round runs
 * in a new child process (JIT and GC state of one case never reach another); the figure of a case is the median over
 * the rounds, and its ratio is to (b) of the same table. Then memory per session against bare XState (heap retained by
 * `--idle` sessions in a new process per round and subject, and the stored bytes of a one-turn session), and cold
 * start: `--cold` new processes per case on the built runtime, and what its imports cost. Exit 0 when it measured, 1
 * when a round failed, 2 for bad options.
 */
export async function benchCommand(options: BenchOptions = {}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  let rounds: number;
  let sessions: number;
  let concurrency: number;
  let warmup: number | undefined;
  let idle: number;
  let cold: number;
  try {
    rounds = positive(options.rounds, 5, '--rounds');
    sessions = positive(options.sessions, 300, '--sessions');
    concurrency = positive(options.concurrency, 32, '--concurrency');
    warmup = options.warmup === undefined ? undefined : positive(options.warmup, 1, '--warmup');
    idle = positive(options.idle, 1_000, '--idle');
    cold = positive(options.cold, 20, '--cold');
  } catch (error) {
    out(`error BENCH_BAD_OPTION: ${(error as Error).message}`);
    return 2;
  }
  let redisUrl = options.redis;
  let redisSkipped: string | undefined;
  let stopRedis = async () => {};
  if (!redisUrl) {
    const started = await startBenchRedis();
    if (typeof started === 'string') redisSkipped = started;
    else {
      redisUrl = started.url;
      stopRedis = started.stop;
    }
  }
  let oneAtATime: Map<CaseId, CaseFigure[]>;
  let inFlight: Map<CaseId, CaseFigure[]>;
  try {
    oneAtATime = await measure(Object.keys(CASE_NAMES) as CaseId[], rounds, warmup, { sessions, redisUrl });
    inFlight = await measure(CONCURRENT_CASES, rounds, warmup, { sessions, redisUrl, concurrency });
  } catch (error) {
    out(`error BENCH_ROUND_FAILED: ${(error as Error).message}`);
    return 1;
  } finally {
    await stopRedis();
  }

  out(`order-support session (create + one message: classify, extract, 3 tools, generate), node ${process.version}`);
  out(
    `median of ${rounds} rounds x ${sessions} sessions, every case of every round in a new process; ratios to (b) bare XState of the same table`,
  );
  out('one session at a time (wall µs = latency of a session):');
  printTable(out, oneAtATime, redisSkipped);
  out(`${concurrency} sessions in flight (wall µs = elapsed time / sessions):`);
  printTable(out, inFlight, redisSkipped);

  await memorySection(out, rounds, idle);
  await coldSection(out, cold);
  try {
    const child = await runChild<ChildSessionsFigure>('child-sessions', { sessions, rounds });
    out(
      `child session against an inline compound state (two instantaneous tool calls, memory store, median of ${rounds} rounds x ${sessions} sessions, a new process):`,
    );
    out(`  inline compound state  ${child.inlineUsPerSession} µs per session`);
    out(`  child session          ${child.childUsPerSession} µs per session (+${child.overheadUsPerSession} µs)`);
  } catch (error) {
    out(`error BENCH_ROUND_FAILED: ${(error as Error).message}`);
    return 1;
  }
  const wall = (id: CaseId) => median(measuredOf(oneAtATime, id).map((f) => f.us));
  out(`runtime/xstate ratio: ${(wall('memory') / wall('bare')).toFixed(2)}`);
  return 0;
}
