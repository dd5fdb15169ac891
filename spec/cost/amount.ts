/**
 * A cost: model calls, tool calls and tokens. `Infinity` means no bound (a loop nothing caps, or model calls that
 * declare no `maxTokens` for the tokens).
 */
export interface Cost {
  modelCalls: number;
  toolCalls: number;
  tokens: number;
}

export const METRICS = ['modelCalls', 'toolCalls', 'tokens'] as const;
export type Metric = (typeof METRICS)[number];

export const METRIC_NAMES: Record<Metric, string> = { modelCalls: 'model calls', toolCalls: 'tool calls', tokens: 'tokens' };

export const ZERO: Cost = Object.freeze({ modelCalls: 0, toolCalls: 0, tokens: 0 });
export const UNBOUNDED: Cost = Object.freeze({ modelCalls: Infinity, toolCalls: Infinity, tokens: Infinity });

export function addCost(a: Cost, b: Cost): Cost {
  return { modelCalls: a.modelCalls + b.modelCalls, toolCalls: a.toolCalls + b.toolCalls, tokens: a.tokens + b.tokens };
}

export function maxCost(a: Cost, b: Cost): Cost {
  return {
    modelCalls: Math.max(a.modelCalls, b.modelCalls),
    toolCalls: Math.max(a.toolCalls, b.toolCalls),
    tokens: Math.max(a.tokens, b.tokens),
  };
}

/** `times` passes of `cost`; zero passes cost nothing even when one pass has no bound. */
export function timesCost(cost: Cost, times: number): Cost {
  const mul = (value: number) => (value === 0 ? 0 : value * times);
  return { modelCalls: mul(cost.modelCalls), toolCalls: mul(cost.toolCalls), tokens: mul(cost.tokens) };
}

export function isZero(cost: Cost): boolean {
  return cost.modelCalls === 0 && cost.toolCalls === 0 && cost.tokens === 0;
}

/** A metric's value as text: `unbounded` for no bound. */
export function formatAmount(value: number): string {
  return Number.isFinite(value) ? String(value) : 'unbounded';
}

/** A cost for JSON: `null` where there is no bound (JSON has no Infinity). */
export function costForJson(cost: Cost): { modelCalls: number | null; toolCalls: number | null; tokens: number | null } {
  const finite = (value: number) => (Number.isFinite(value) ? value : null);
  return { modelCalls: finite(cost.modelCalls), toolCalls: finite(cost.toolCalls), tokens: finite(cost.tokens) };
}
