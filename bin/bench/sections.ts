import { runChild } from './child.ts';
import { analyzeImports, type ImportReport } from './cold-imports.ts';
import { COLD_CASES, measureCold, prepareCold, type ColdCaseId, type ColdRun } from './cold.ts';
import type { HeapConfig, HeapFigure, HeapSubject, Retained } from './heap.ts';
import { CASE_NAMES } from './round.ts';
import { median } from './stats.ts';

type Out = (line: string) => void;

/** Targets the issue sets: heap retained by an idle session, stored bytes of a one-turn session, cold start ratio. */
export const MEMORY_TARGETS = { idleBytes: 2_500, storedBytes: 4_000, coldRatio: 1.3 } as const;

const SUBJECT_NAMES: Record<HeapSubject, string> = { bare: CASE_NAMES.bare, flowing: CASE_NAMES.memory };
const bytes = (value: number) => Math.round(value).toLocaleString('en-US');
const verdict = (value: number, target: number, unit: string) => `<= ${target}${unit}: ${value <= target ? 'met' : 'missed'}`;

/**
 * Heap retained per session and stored bytes of a one-turn session: every round, one new process per subject (the
 * order alternating), each keeping `count` sessions; medians over the rounds, ratios to bare XState.
 */
export async function memorySection(out: Out, rounds: number, count: number): Promise<void> {
  const figures: Record<HeapSubject, HeapFigure[]> = { bare: [], flowing: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      const order: HeapSubject[] = round % 2 === 0 ? ['bare', 'flowing'] : ['flowing', 'bare'];
      for (const subject of order) figures[subject].push(await runChild<HeapFigure>('heap-main', { subject, count } satisfies HeapConfig));
    }
  } catch (error) {
    out(`memory per session: measurement failed (${(error as Error).message})`);
    return;
  }
  const of = (subject: HeapSubject, pick: (f: HeapFigure) => number) => median(figures[subject].map(pick));
  const retained = (subject: HeapSubject, phase: 'created' | 'afterTurn', key: keyof Retained) => of(subject, (f) => f[phase][key]);
  out(
    `memory per session, memory store: median of ${rounds} rounds, each a new process keeping ${count} sessions of each kind; bytes of heap after full GC, all of it and without V8's compiled code; ratios to (b) of the no-code figure`,
  );
  out(
    `  ${'case'.padEnd(28)} ${'new, waiting for its 1st message'.padStart(32)}  ${'after one turn, waiting for the next'.padStart(36)}  target (after one turn, no code)`,
  );
  out(
    `  ${''.padEnd(28)} ${'heap'.padStart(12)} ${'no code'.padStart(9)} ${'ratio'.padStart(9)}  ${'heap'.padStart(16)} ${'no code'.padStart(9)} ${'ratio'.padStart(9)}`,
  );
  for (const subject of ['bare', 'flowing'] as const) {
    const created = retained(subject, 'created', 'data');
    const turned = retained(subject, 'afterTurn', 'data');
    const target = subject === 'flowing' ? verdict(turned, MEMORY_TARGETS.idleBytes, ' B') : '';
    out(
      `  ${SUBJECT_NAMES[subject].padEnd(28)} ${bytes(retained(subject, 'created', 'heap')).padStart(12)} ${bytes(created).padStart(9)} ${(created / retained('bare', 'created', 'data')).toFixed(2).padStart(9)}  ${bytes(retained(subject, 'afterTurn', 'heap')).padStart(16)} ${bytes(turned).padStart(9)} ${(turned / retained('bare', 'afterTurn', 'data')).toFixed(2).padStart(9)}  ${target}`,
    );
  }
  const stored = (pick: (s: HeapFigure['stored']) => number) => of('flowing', (f) => pick(f.stored));
  const snapshot = of('bare', (f) => f.stored.snapshot);
  const total = stored((s) => s.record + s.log + s.journal);
  out('stored size of one session after one turn (bytes of JSON, as the stores keep it: one value per record, event and journal entry):');
  out(`  ${`${CASE_NAMES.bare}, persisted snapshot`.padEnd(48)} ${bytes(snapshot).padStart(7)} B ${'1.00'.padStart(6)}`);
  out(
    `  ${`${CASE_NAMES.memory}, record + log + journal`.padEnd(48)} ${bytes(total).padStart(7)} B ${(total / snapshot).toFixed(2).padStart(6)}  ${verdict(total, MEMORY_TARGETS.storedBytes, ' B')}`,
  );
  out(
    `      record ${bytes(stored((s) => s.record))} B (its XState snapshot ${bytes(stored((s) => s.snapshot))} B), log ${bytes(stored((s) => s.log))} B (${stored((s) => s.events)} events), journal ${bytes(stored((s) => s.journal))} B (${stored((s) => s.calls)} calls)`,
  );
}

/**
 * Cold start: `runs` fresh processes per case (import, one order-support session, exit), medians and ratios to bare
 * XState; then what the Flowing process's imports cost and which of them the session never runs.
 */
export async function coldSection(out: Out, runs: number): Promise<void> {
  let results: Map<ColdCaseId, ColdRun[]>;
  let imports: ImportReport;
  try {
    const reason = await prepareCold();
    if (reason) {
      out(`cold start: skipped, ${reason}`);
      return;
    }
    results = measureCold(runs);
    imports = analyzeImports(Math.min(runs, 5), runs);
  } catch (error) {
    out(`cold start: measurement failed (${(error as Error).message})`);
    return;
  }
  const fig = (id: ColdCaseId, pick: (r: ColdRun) => number) => median(results.get(id)!.map(pick));
  const wall = (id: ColdCaseId) => fig(id, (r) => r.wall);
  const cpu = (id: ColdCaseId) => fig(id, (r) => r.cpu);
  out(
    `cold start: median of ${runs} new processes per case (plain node on the built packages, runtime/dist: import, one order-support session, exit); ratios to (b)`,
  );
  out(
    `  ${'case'.padEnd(34)} ${'wall ms'.padStart(8)} ${'min-max'.padStart(11)} ${'ratio'.padStart(6)} ${'cpu ms'.padStart(7)} ${'ratio'.padStart(6)} ${'imported at'.padStart(12)} ${'session ms'.padStart(11)}  target (wall ratio)`,
  );
  for (const id of Object.keys(COLD_CASES) as ColdCaseId[]) {
    const walls = results.get(id)!.map((r) => r.wall);
    const ratio = wall(id) / wall('bare');
    const target = id === 'flowing' ? verdict(ratio, MEMORY_TARGETS.coldRatio, 'x') : '';
    const range = `${Math.min(...walls).toFixed(0)}-${Math.max(...walls).toFixed(0)}`;
    const session = id === 'node' ? '' : fig(id, (r) => r.done - r.imported).toFixed(1);
    out(
      `  ${COLD_CASES[id].padEnd(34)} ${wall(id).toFixed(1).padStart(8)} ${range.padStart(11)} ${ratio.toFixed(2).padStart(6)} ${cpu(id).toFixed(1).padStart(7)} ${(cpu(id) / cpu('bare')).toFixed(2).padStart(6)} ${(id === 'node' ? '' : fig(id, (r) => r.imported).toFixed(1)).padStart(12)} ${session.padStart(11)}  ${target}`,
    );
  }
  const above = (id: ColdCaseId) => (wall(id) - wall('node')) / (wall('bare') - wall('node'));
  out(`  above node's own start: (c) ${above('flowing').toFixed(2)}x (b), (b') ${above('bareZod').toFixed(2)}x (b)`);
  printImports(out, imports);
}

function printImports(out: Out, r: ImportReport): void {
  const kb = (n: number) => (n / 1024).toFixed(0);
  const evaluating = r.importMs - r.loaderMs - r.compileMs - r.gcMs;
  out(
    `what the cold Flowing process imports: ${r.modules} modules, ${kb(r.bytes)} KB; CPU ms, medians of ${r.profiles} runs under --cpu-prof (its overhead included)`,
  );
  out(
    `  imports ${r.importMs.toFixed(0)} ms: Node's module loader ${r.loaderMs.toFixed(0)} (resolve, read, link) + ${r.compileMs.toFixed(0)} (compile), evaluating modules ${evaluating.toFixed(0)}, GC ${r.gcMs.toFixed(0)}; the session after them ${r.sessionMs.toFixed(0)} ms`,
  );
  out(`  evaluating most: ${r.evaluations.map((e) => `${e.module} ${e.ms.toFixed(1)}`).join(', ')}`);
  out(
    `  ${'package'.padEnd(28)} ${'modules'.padStart(7)} ${'KB'.padStart(5)} ${'run in session'.padStart(14)} ${'evaluate ms'.padStart(11)} ${`imported alone, cpu ms (median of ${r.aloneRuns})`.padStart(22)}`,
  );
  for (const p of r.packages) {
    out(
      `  ${p.name.padEnd(28)} ${String(p.modules).padStart(7)} ${kb(p.bytes).padStart(5)} ${String(p.ranInSession).padStart(14)} ${p.evaluateMs.toFixed(1).padStart(11)} ${(p.aloneMs === undefined ? '' : p.aloneMs.toFixed(1)).padStart(22)}`,
    );
  }
  out(
    `  Node built-ins imported: ${r.builtins.map((b) => (b.aloneMs === undefined ? b.name : `${b.name} (imported alone ${b.aloneMs.toFixed(1)} ms)`)).join(', ')}`,
  );
  out(
    '  loaded, and no function of them ran in the session (lazy-load candidates; est. ms = evaluating them + loader ms per module + compile ms per byte):',
  );
  out(`  ${'est. ms'.padStart(7)} ${'modules'.padStart(7)} ${'KB'.padStart(5)}  module (imported by)`);
  for (const c of r.candidates.slice(0, 15)) {
    out(
      `  ${c.estimateMs.toFixed(1).padStart(7)} ${String(c.modules).padStart(7)} ${kb(c.bytes).padStart(5)}  ${c.root} (${c.importedBy})`,
    );
  }
}
