/** Exponential backoff with jitter: base * 2^(attempt-1), capped, times a factor in [0.5, 1). */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.round(Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.5 + random() / 2));
}
