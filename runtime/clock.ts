/** Time as the runtime sees it; tests inject a manual clock to drive timeouts and backoff. */
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

/** Resolves after `ms` on the given clock, or rejects with the signal's reason when it aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** XState's view of a runtime clock, one per clock. */
const xstateClocks = new WeakMap<Clock, { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(id: unknown): void }>();

export function xstateClock(clock: Clock) {
  let adapter = xstateClocks.get(clock);
  if (!adapter) {
    adapter = { setTimeout(fn, ms) { return clock.setTimeout(fn, ms); }, clearTimeout(id) { clock.clearTimeout(id); } };
    xstateClocks.set(clock, adapter);
  }
  return adapter;
}
