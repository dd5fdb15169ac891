import { sleep, type Clock } from '../clock.ts';
import { FlowingError } from '../errors.ts';

/** A signal that aborts when any of `signals` aborts or after `timeoutMs` (with `timeoutError`); call `dispose` when done. */
export function linkedSignal(signals: readonly AbortSignal[], clock: Clock, timeoutMs?: number, timeoutError?: () => FlowingError) {
  const controller = new AbortController();
  const listeners: Array<() => void> = [];
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(cancelReason(signal.reason));
      break;
    }
    const onAbort = () => controller.abort(cancelReason(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    listeners.push(() => signal.removeEventListener('abort', onAbort));
  }
  let timer: unknown;
  if (timeoutMs !== undefined && Number.isFinite(timeoutMs) && !controller.signal.aborted) {
    timer = clock.setTimeout(() => controller.abort(timeoutError?.() ?? new FlowingError('TOOL_TIMEOUT', `timed out after ${timeoutMs} ms`)), timeoutMs);
  }
  return {
    signal: controller.signal,
    dispose() {
      if (timer !== undefined) clock.clearTimeout(timer);
      for (const remove of listeners) remove();
    },
  };
}

function cancelReason(reason: unknown): FlowingError {
  return reason instanceof FlowingError ? reason : new FlowingError('CANCELLED', 'the call was cancelled');
}

/** Rejects with the signal's reason as soon as it aborts. */
export function whenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Exponential backoff with jitter: base * 2^(attempt-1), capped, times a factor in [0.5, 1). */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.round(Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.5 + random() / 2));
}

export { sleep };
