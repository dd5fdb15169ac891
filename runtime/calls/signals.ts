import { sleep, type Clock } from '../clock.ts';
import { FlowingError } from '../errors.ts';

/**
 * A signal that aborts when any of `signals` aborts or after `timeoutMs` (with `timeoutError`), plus `aborted`, a
 * promise that rejects with the reason at that moment (without another listener); call `dispose` when done.
 */
export function linkedSignal(signals: readonly AbortSignal[], clock: Clock, timeoutMs?: number, timeoutError?: () => FlowingError) {
  const controller = new AbortController();
  let reject!: (reason: unknown) => void;
  const aborted = new Promise<never>((_, r) => (reject = r));
  aborted.catch(() => {}); // observed by whoever races it; never an unhandled rejection
  const abort = (reason: FlowingError) => {
    if (controller.signal.aborted) return;
    controller.abort(reason);
    reject(reason);
  };
  const listeners: Array<() => void> = [];
  for (const signal of signals) {
    if (signal.aborted) {
      abort(cancelReason(signal.reason));
      break;
    }
    const onAbort = () => abort(cancelReason(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    listeners.push(() => signal.removeEventListener('abort', onAbort));
  }
  let timer: unknown;
  if (timeoutMs !== undefined && Number.isFinite(timeoutMs) && !controller.signal.aborted) {
    timer = clock.setTimeout(() => abort(timeoutError?.() ?? new FlowingError('TOOL_TIMEOUT', `timed out after ${timeoutMs} ms`)), timeoutMs);
  }
  return {
    signal: controller.signal,
    aborted,
    abort,
    dispose() {
      if (timer !== undefined) clock.clearTimeout(timer);
      for (const remove of listeners) remove();
    },
  };
}

function cancelReason(reason: unknown): FlowingError {
  return reason instanceof FlowingError ? reason : new FlowingError('CANCELLED', 'the call was cancelled');
}

/** Exponential backoff with jitter: base * 2^(attempt-1), capped, times a factor in [0.5, 1). */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.round(Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.5 + random() / 2));
}

export { sleep };
