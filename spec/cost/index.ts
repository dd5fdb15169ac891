export { computeCost, type CostOptions, type CostRow, type MachineCost } from './bound.ts';
export { budgetProblems, describeSteps, describeRow } from './budget.ts';
export { callBound, invokedMachine, type CallBound } from './calls.ts';
export type { CostStep, CostLoop } from './analysis.ts';
export { addCost, maxCost, costForJson, formatAmount, METRICS, METRIC_NAMES, ZERO, UNBOUNDED, type Cost, type Metric } from './amount.ts';
