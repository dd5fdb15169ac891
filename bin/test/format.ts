import type { Coverage, MachinePath } from '@flowing/runtime/testing';
import type { MachineOutcome } from './test-command.ts';

/** A machine's test outcome as terminal lines: summary, coverage, findings, then each failure in full. */
export function formatMachineReport(outcome: MachineOutcome, options: { live?: boolean } = {}): string[] {
  const lines = [`${outcome.ok ? '✓' : '✗'} ${outcome.machineId}`];
  const paths = outcome.paths;
  if (paths) {
    const passed = paths.paths.filter((p) => p.ok).length;
    lines.push(`  paths: ${passed}/${paths.paths.length} passed`);
  }
  const passedCases = outcome.cases.filter((c) => c.ok).length;
  lines.push(
    `  cases${options.live ? ' (live)' : ''}: ${passedCases}/${outcome.cases.length} passed${outcome.cases.length === 0 ? ` (record some: flowing run ${outcome.machineId} --record NAME)` : ''}`,
  );
  const { coverage } = outcome;
  lines.push(`  coverage: ${coverageLine(coverage.combined)}`);
  if (coverage.paths) lines.push(`    paths: ${coverageLine(coverage.paths)}`);
  lines.push(`    cases: ${coverageLine(coverage.cases)}`);
  // Cases alone rarely cover everything; what is missed is worth listing once paths have had their go.
  if (coverage.paths) {
    for (const missed of coverage.combined.states.missed) lines.push(`    state not covered: ${missed}`);
    for (const missed of coverage.combined.transitions.missed) lines.push(`    transition not covered: ${missed.replace(/\|/g, ' --')}`);
  }
  for (const f of outcome.findings) lines.push(`  warning ${f.code} ${f.where}: ${f.message}`);
  for (const p of paths?.paths ?? []) {
    if (!p.ok) lines.push(`  ✗ ${p.name} (${p.path.inputs.map(inputLabel).join(', ') || 'no events'}): ${p.problem}`);
  }
  for (const c of outcome.cases) {
    if (options.live && c.result && 'live' in c.result) {
      const live = (c.result as unknown as { live: { modelCalls: number; tokens: number; latencyMs: number } }).live;
      lines.push(
        `  ${c.ok ? '✓' : '✗'} ${c.name}: ${live.modelCalls} model calls, ${live.tokens} tokens, ${Math.round(live.latencyMs)} ms`,
      );
    }
    if (c.error) lines.push(`  ✗ ${c.path}: error ${c.error.code}: ${c.error.message}`);
    else if (c.result && !c.ok) {
      lines.push(...c.result.report.map((line) => `  ${line}`));
      if (c.updated) lines.push(`    updated ${c.path} (review the change with git diff)`);
    }
  }
  return lines;
}

/** How a path's step reads in a report: the event type, `after 500 ms` (a timer it waits for), or `cancel`. */
function inputLabel(input: MachinePath['inputs'][number]): string {
  if (input.type === 'event') return input.event.type;
  if (input.type === 'timer') return /^\d+$/.test(input.delay) ? `after ${input.delay} ms` : `after ${input.delay}`;
  return 'cancel';
}

function coverageLine(c: Coverage): string {
  return `states ${c.states.covered}/${c.states.total}, transitions ${c.transitions.covered}/${c.transitions.total}`;
}
