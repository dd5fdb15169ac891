/** Time as the runtime sees it; tests inject a virtual clock (`createVirtualClock`) to drive timeouts and backoff. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** The real clock (Date.now and the timer functions). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

/** XState's view of a runtime clock (XState calls its timer functions unbound, so they are bound once here). */
export function xstateClock(clock: Clock): { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(id: unknown): void } {
  return { setTimeout: (fn, ms) => clock.setTimeout(fn, ms), clearTimeout: (id) => clock.clearTimeout(id) };
}
