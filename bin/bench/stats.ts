/** The middle value (the lower middle for an even count). */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** The nearest-rank percentile `p` (0-100) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/**
 * A ratio for a table: two decimals, or two significant digits when that would round a positive ratio to 0.00
 * (the hand-written case runs hundreds of times faster than bare XState).
 */
export function formatRatio(ratio: number): string {
  if (ratio > 0 && ratio < 0.1) return ratio.toPrecision(2);
  return ratio.toFixed(2);
}
