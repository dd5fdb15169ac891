import { sleep, type Clock } from '../clock.ts';
import { FlowingError } from '../errors.ts';

/**
 * A signal that aborts when any of `signals` aborts or after `timeoutMs` (with `timeoutError`), plus `aborted`, a
 * promise that rejects with the reason at that moment (without another listener); call `dispose` when done.
 */
export function linkedSignal(signals: readonly AbortSignal[], clock: Clock, timeoutMs?: number, timeoutError?: () => FlowingError): AttemptSignal {
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
    get isAborted() {
      return controller.signal.aborted;
    },
    aborted,
    abort,
    dispose() {
      if (timer !== undefined) clock.clearTimeout(timer);
      for (const remove of listeners) remove();
    },
  };
}

/** What `linkedSignal` and `CallScope.attempt` return: a signal, a promise rejecting when it aborts, and cleanup. */
export interface AttemptSignal {
  readonly signal: AbortSignal;
  /** True once the attempt was cancelled or timed out. */
  readonly isAborted: boolean;
  readonly aborted: Promise<never>;
  abort(reason: FlowingError): void;
  dispose(): void;
}

/**
 * The abort side of one invoked call, owned by the runtime's actor logic instead of an AbortController linked to
 * XState's: stopping the invocation aborts the signal of the attempt in progress directly, so a call needs no
 * listener and no controller of XState's. `signal`, an AbortSignal for waits (slots, backoff), is made on first use.
 */
export class CallScope {
  private isStopped = false;
  private waits?: AbortController;
  private current?: (reason: FlowingError) => void;

  /** A scope that stops when `signal` aborts (calls made from inside an agent loop). */
  static linkedTo(signal: AbortSignal): CallScope {
    const scope = new CallScope();
    if (signal.aborted) scope.stop();
    else signal.addEventListener('abort', () => scope.stop(), { once: true });
    return scope;
  }

  get stopped(): boolean {
    return this.isStopped;
  }

  /** Aborts when the invocation stops (with an AbortError, as XState's own signal does). */
  get signal(): AbortSignal {
    if (!this.waits) {
      this.waits = new AbortController();
      if (this.isStopped) this.waits.abort();
    }
    return this.waits.signal;
  }

  stop() {
    if (this.isStopped) return;
    this.isStopped = true;
    this.waits?.abort();
    this.current?.(new FlowingError('CANCELLED', 'the call was cancelled'));
  }

  /**
   * A fresh signal for one attempt: aborts when the scope stops or after `timeoutMs`; call `dispose` when done.
   * The AbortSignal itself is made when first read (already aborted, with the reason, if that happened before):
   * most tools never look at it, and it is the dearest part of a call.
   */
  attempt(clock: Clock, timeoutMs: number | undefined, timeoutError: () => FlowingError): AttemptSignal {
    return new Attempt(this, clock, timeoutMs, timeoutError);
  }

  /** @internal */
  attach(abort: ((reason: FlowingError) => void) | undefined, previous?: (reason: FlowingError) => void) {
    if (previous === undefined || this.current === previous) this.current = abort;
  }
}

class Attempt {
  readonly aborted: Promise<never>;
  private controller?: AbortController;
  private reason?: FlowingError;
  private reject!: (reason: unknown) => void;
  private timer: unknown;
  private readonly onAbort: (reason: FlowingError) => void;

  constructor(private readonly scope: CallScope, private readonly clock: Clock, timeoutMs: number | undefined, timeoutError: () => FlowingError) {
    this.aborted = new Promise<never>((_, reject) => (this.reject = reject));
    this.aborted.catch(() => {}); // observed by whoever races it; never an unhandled rejection
    this.onAbort = (reason) => this.abort(reason);
    if (scope.stopped) {
      this.abort(new FlowingError('CANCELLED', 'the call was cancelled'));
      return;
    }
    scope.attach(this.onAbort);
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) this.timer = clock.setTimeout(() => this.abort(timeoutError()), timeoutMs);
  }

  get isAborted(): boolean {
    return this.reason !== undefined;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: FlowingError) {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.reject(reason);
  }

  dispose() {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.scope.attach(undefined, this.onAbort);
  }
}

function cancelReason(reason: unknown): FlowingError {
  return reason instanceof FlowingError ? reason : new FlowingError('CANCELLED', 'the call was cancelled');
}

/** Exponential backoff with jitter: base * 2^(attempt-1), capped, times a factor in [0.5, 1). */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.round(Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.5 + random() / 2));
}

export { sleep };
