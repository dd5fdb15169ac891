import { problem, type SpecProblem } from '../problems.ts';
import type { FlowSpec } from '../schema.ts';
import { formatAmount, METRIC_NAMES, METRICS } from './amount.ts';
import type { CostStep } from './analysis.ts';
import type { CostRow, MachineCost } from './bound.ts';

/** The states of a worst path as text: `idle → classify → (retry → wait) x4 → idle`. */
export function describeSteps(steps: readonly CostStep[]): string {
  return steps
    .map((step) =>
      step.loop ? `(${step.loop.states.join(' → ')}) x${step.loop.passes === null ? 'unbounded' : step.loop.passes + 1}` : step.state,
    )
    .join(' → ');
}

export function describeRow(row: CostRow, per: 'turn' | 'session'): string {
  if (per === 'session') return `the path to '${row.to}'`;
  return row.from === '(start)' ? `the first turn (to '${row.to}')` : `the turn on ${row.event} from '${row.from}' (to '${row.to}')`;
}

/**
 * A path over the spec's budget, at the call that crosses it: each metric the budget limits is checked on every turn
 * (`per: "turn"`, the default) or every path to a final state (`per: "session"`).
 */
export function budgetProblems(spec: FlowSpec, cost: MachineCost): SpecProblem[] {
  const budget = spec.budget;
  if (!budget) return [];
  const per = budget.per ?? 'turn';
  const rows = per === 'turn' ? cost.turns : cost.paths;
  const problems: SpecProblem[] = [];
  const seen = new Set<string>();
  for (const metric of METRICS) {
    const limit = budget[metric];
    if (limit === undefined) continue;
    for (const row of rows) {
      if (row.cost[metric] <= limit) continue;
      const steps = row.worst[metric];
      let spent = 0;
      const crossing = steps.find((step) => (spent += step.cost[metric]) > limit) ?? steps.at(-1);
      const at = crossing?.at ?? '/budget';
      if (seen.has(`${metric}\0${at}`)) continue;
      seen.add(`${metric}\0${at}`);
      const why =
        crossing?.loop?.passes === null
          ? `; the loop ${crossing.loop.states.join(' → ')} has no bound`
          : metric === 'tokens' && row.cost.tokens === Infinity
            ? '; a model call on it declares no maxTokens'
            : '';
      const path = steps.length > 0 ? ` (${describeSteps(steps)})` : cost.approximate ? ' (every turn counted once)' : '';
      problems.push(
        problem(
          'SPEC_BUDGET_EXCEEDED',
          at,
          `${describeRow(row, per)}${path} makes up to ${formatAmount(row.cost[metric])} ${METRIC_NAMES[metric]}${why}; the budget allows ${limit} per ${per}`,
        ),
      );
    }
  }
  return problems;
}
