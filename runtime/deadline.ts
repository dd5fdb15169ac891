import type { Clock } from './clock.ts';
import { FlowingError } from './errors.ts';

/** What a Deadline hangs off: a caller's AbortSignal or another Deadline. */
export type DeadlineParent = AbortSignal | Deadline;

export interface DeadlineOptions {
  parent?: DeadlineParent;
  /** Aborts with `onTimeout()` this long after it was made (or last touched), on the runtime's clock. */
  timeoutMs?: number;
  onTimeout?: () => FlowingError;
}

const cancelled = () => new FlowingError('CANCELLED', 'the call was cancelled');

/**
 * The runtime's one way of stopping work. A Deadline aborts when its parent does (a caller's AbortSignal, or the
 * Deadline of the call it belongs to), when its timeout passes on the runtime's Clock, or when `abort` is called;
 * the reason is always a FlowingError. Tools, model calls, backoff waits and stream silence all use it.
 *
 * It is cheap until looked at: its AbortSignal and its `aborted` promise are made on first read (most tools never
 * read the signal), a Deadline child hangs off its parent without a DOM listener, and `dispose` removes the timer
 * and the one listener it may have put on a parent AbortSignal, so nothing is left behind after a call.
 */
export class Deadline {
  private reasonValue?: FlowingError;
  private controller?: AbortController;
  private rejectAborted?: (reason: FlowingError) => void;
  private abortedPromise?: Promise<never>;
  private timer: unknown;
  private children?: Set<Deadline>;
  /** What it hangs off while it may still abort on its own (cleared when it aborts or is disposed). */
  private parentDeadline?: Deadline;
  private parentSignal?: AbortSignal;
  private onParentAbort?: () => void;

  constructor(
    private readonly clock: Clock,
    private readonly options: DeadlineOptions = {},
  ) {
    const { parent } = options;
    if (parent instanceof Deadline) {
      if (parent.isAborted) {
        this.reasonValue = parent.reasonValue;
        return;
      }
      (parent.children ??= new Set()).add(this);
      this.parentDeadline = parent;
    } else if (parent) {
      if (parent.aborted) {
        this.reasonValue = asFlowingError(parent.reason);
        return;
      }
      this.onParentAbort = () => this.abort(asFlowingError(parent.reason));
      parent.addEventListener('abort', this.onParentAbort, { once: true });
      this.parentSignal = parent;
    }
    this.arm();
  }

  get isAborted(): boolean {
    return this.reasonValue !== undefined;
  }

  /** Why it aborted, once it did. */
  get reason(): FlowingError | undefined {
    return this.reasonValue;
  }

  /** An AbortSignal for APIs that take one (made on first read; already aborted with the reason if it happened). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reasonValue) this.controller.abort(this.reasonValue);
    }
    return this.controller.signal;
  }

  /** Rejects with the reason when it aborts; for racing work against it. Never an unhandled rejection. */
  get aborted(): Promise<never> {
    if (!this.abortedPromise) {
      this.abortedPromise = this.reasonValue
        ? Promise.reject(this.reasonValue)
        : new Promise<never>((_, reject) => (this.rejectAborted = reject));
      this.abortedPromise.catch(() => {});
    }
    return this.abortedPromise;
  }

  /** Settles with `work`, or rejects with the reason as soon as the deadline aborts. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.reasonValue) return Promise.reject(this.reasonValue);
    return Promise.race([work, this.aborted]);
  }

  /** A deadline inside this one: it aborts when this one does, or after its own timeout. */
  child(timeoutMs?: number, onTimeout?: () => FlowingError): Deadline {
    return new Deadline(this.clock, {
      parent: this,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(onTimeout ? { onTimeout } : {}),
    });
  }

  /** Starts the timeout again (a stream sent something: its silence is measured from now). */
  touch(): void {
    if (this.reasonValue || this.options.timeoutMs === undefined) return;
    this.clock.clearTimeout(this.timer);
    this.arm();
  }

  abort(reason: FlowingError = cancelled()): void {
    if (this.reasonValue) return;
    this.reasonValue = reason;
    this.release();
    this.controller?.abort(reason);
    this.rejectAborted?.(reason);
    const children = this.children;
    this.children = undefined;
    if (children) for (const child of children) child.abort(reason);
  }

  /** Releases the timer and the hold on the parent; the deadline no longer aborts on its own. */
  dispose(): void {
    this.release();
  }

  private release() {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.parentDeadline) {
      this.parentDeadline.children?.delete(this);
      this.parentDeadline = undefined;
    }
    if (this.parentSignal) {
      this.parentSignal.removeEventListener('abort', this.onParentAbort!);
      this.parentSignal = undefined;
    }
  }

  private arm() {
    const { timeoutMs, onTimeout } = this.options;
    if (timeoutMs === undefined || !Number.isFinite(timeoutMs)) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.abort(onTimeout?.() ?? new FlowingError('TOOL_TIMEOUT', `timed out after ${timeoutMs} ms`));
    }, timeoutMs);
  }
}

/** Resolves after `ms` on the clock, or rejects with the deadline's reason when it aborts first. */
export function sleep(clock: Clock, ms: number, deadline?: Deadline): Promise<void> {
  if (!deadline) return new Promise((resolve) => clock.setTimeout(resolve, ms));
  const wait = new Deadline(clock, { parent: deadline });
  return wait
    .race(
      new Promise<void>((resolve) => {
        const timer = clock.setTimeout(resolve, ms);
        wait.aborted.catch(() => clock.clearTimeout(timer));
      }),
    )
    .finally(() => wait.dispose());
}

function asFlowingError(reason: unknown): FlowingError {
  return reason instanceof FlowingError ? reason : cancelled();
}
