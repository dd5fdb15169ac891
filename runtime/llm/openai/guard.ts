import { FlowingError } from '../../errors.ts';

/**
 * One model request's stop conditions in one place: the caller's AbortSignal (-> CANCELLED) and a timer
 * (-> LLM_TIMEOUT) that streams re-arm on every chunk, so a stalled stream is cut after `timeoutMs` of silence.
 * Its `signal` goes to the SDK; `race` settles as soon as either fires, without relying on the SDK to notice.
 * @internal
 */
export class RequestGuard {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private rejectStopped: (error: FlowingError) => void = () => {};
  private readonly stopped: Promise<never>;
  /** Why the request was stopped, once it was. */
  failure: FlowingError | undefined;

  constructor(
    private readonly outer: AbortSignal,
    private readonly timeoutMs: number,
    private readonly model: string,
  ) {
    this.stopped = new Promise<never>((_, reject) => {
      this.rejectStopped = reject;
    });
    // The race promise may never be awaited (a request that finished first); keep it from surfacing as unhandled.
    this.stopped.catch(() => {});
    if (outer.aborted) this.onOuterAbort();
    else outer.addEventListener('abort', this.onOuterAbort, { once: true });
    this.arm();
  }

  /** The signal to hand to the SDK request. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Re-arms the silence timer (a stream chunk arrived). */
  touch(): void {
    if (this.failure === undefined) this.arm();
  }

  /** Throws the stop reason, if the request was stopped. */
  throwIfStopped(): void {
    if (this.failure) throw this.failure;
  }

  /** Settles with `work`, or rejects with the stop reason as soon as the request is stopped. */
  race<T>(work: Promise<T>): Promise<T> {
    this.throwIfStopped();
    return Promise.race([work, this.stopped]);
  }

  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void {
    clearTimeout(this.timer);
    this.outer.removeEventListener('abort', this.onOuterAbort);
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.stop(new FlowingError('LLM_TIMEOUT', `model '${this.model}' sent nothing for ${this.timeoutMs} ms; raise timeoutMs or check the provider`, { details: { timeoutMs: this.timeoutMs } }));
    }, this.timeoutMs);
  }

  private readonly onOuterAbort = (): void => {
    this.stop(new FlowingError('CANCELLED', `the call to model '${this.model}' was cancelled`, { cause: this.outer.reason }));
  };

  private stop(failure: FlowingError): void {
    if (this.failure) return;
    this.failure = failure;
    clearTimeout(this.timer);
    this.controller.abort(failure);
    this.rejectStopped(failure);
  }
}
