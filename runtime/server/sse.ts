import { FINISHED_STATUSES } from '@flowing/protocol';
import type { SSEStreamingApi } from 'hono/streaming';
import type { FlowError } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';
import type { Session } from '../runtime.ts';
import { TERMINAL_EVENT_TYPES } from './constants.ts';
import type { ServerLogger } from './log.ts';

export interface EventPipeOptions {
  heartbeatMs: number;
  retryMs: number;
  log: ServerLogger;
  /** End the stream once the session has finished and every event up to then was written. */
  endWhenFinished: boolean;
}

/** The data of the `error` event that ends a stream which cannot go on: a code, a message and the seq concerned. */
export interface StreamError extends FlowError {
  /** The damaged event's seq (FLOW_STORE_CORRUPT), else the last seq written. */
  seq: number;
}

/**
 * Writes a session's events with `seq > afterSeq` to an SSE stream, once and in order (`id:` = seq, `event:` = type,
 * `data:` = the JSON envelope), with a `retry:` hint first and a `:` comment every `heartbeatMs`. The subscription
 * reads stored events first and then live ones, so a reconnect with Last-Event-ID continues exactly after it.
 * A stream that cannot go on (a damaged event row, a session gone from the store) ends with an `error` event (no
 * id: it is not a log event) whose data is a StreamError.
 */
export class EventPipe {
  private queue: RuntimeEvent[] = [];
  private wake?: () => void;
  private written: number;
  private readonly seqWaiters: Array<{ seq: number; resolve: () => void }> = [];
  private stopped = false;
  private unsubscribe?: () => void;
  private heartbeat?: ReturnType<typeof setInterval>;
  private failure?: StreamError;
  private checking = false;
  /** Resolves when the pipe stops: the session finished, the client went away, or `stop` was called. */
  readonly done: Promise<void>;

  constructor(
    private readonly stream: SSEStreamingApi,
    private readonly session: Session,
    afterSeq: number,
    private readonly options: EventPipeOptions,
  ) {
    this.written = afterSeq;
    stream.onAbort(() => this.stop());
    this.done = this.run(afterSeq);
  }

  /** Seq of the last event written. */
  get lastSeq(): number {
    return this.written;
  }

  get aborted(): boolean {
    return this.stream.aborted;
  }

  /** Resolves once every event up to `seq` was written (or the pipe stopped). */
  waitFor(seq: number): Promise<void> {
    if (this.written >= seq || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.seqWaiters.push({ seq, resolve }));
  }

  stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.wake?.();
    for (const waiter of this.seqWaiters.splice(0)) waiter.resolve();
  }

  private async run(afterSeq: number): Promise<void> {
    // A bare `retry:` field (no data line) sets the client's reconnection time without dispatching a message.
    await this.stream.write(`retry: ${this.options.retryMs}\n\n`);
    this.heartbeat = setInterval(() => {
      void this.stream.write(': keep-alive\n\n');
      void this.checkSessionExists();
    }, this.options.heartbeatMs);
    this.heartbeat.unref?.();
    this.unsubscribe = this.session.subscribe(
      afterSeq,
      (event) => {
        this.queue.push(event);
        this.wake?.();
      },
      (error) => {
        const cause = ((error.details as { cause?: FlowError } | undefined)?.cause ?? error) as FlowError;
        const seq = (cause.details as { seq?: unknown } | undefined)?.seq;
        this.fail({ code: cause.code, message: cause.message, seq: typeof seq === 'number' ? seq : this.written + 1 });
      },
    );
    let endingSeen = false;
    while (!this.stopped) {
      const event = this.queue.shift();
      if (!event && this.failure) {
        await this.stream.writeSSE({ event: 'error', data: JSON.stringify(this.failure) });
        break;
      }
      if (!event) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      await this.stream.writeSSE({ id: String(event.seq), event: event.type, data: JSON.stringify(event) });
      this.written = event.seq;
      for (let i = this.seqWaiters.length - 1; i >= 0; i--) {
        if (this.seqWaiters[i]!.seq <= event.seq) this.seqWaiters.splice(i, 1)[0]!.resolve();
      }
      // Events may follow the one that ended the session (a cancelled call reports its failure after), so once an
      // ending event was seen, the store decides when the last one was written.
      if (TERMINAL_EVENT_TYPES.has(event.type) || event.type === 'error') endingSeen = true;
      if (this.options.endWhenFinished && endingSeen && this.queue.length === 0 && (await this.finishedAt(event.seq))) break;
    }
    this.stop();
  }

  /** Ends the stream with an `error` event once the events before it are written. */
  private fail(error: StreamError) {
    if (this.failure || this.stopped) return;
    this.failure = error;
    this.options.log({ level: 'warn', code: error.code, message: `stream of session ${this.session.id} ended: ${error.message}` });
    this.wake?.();
  }

  /** A session removed from the store (expired, deleted, a Redis restarted without persistence) ends its streams. */
  private async checkSessionExists() {
    if (this.checking || this.stopped) return;
    this.checking = true;
    try {
      await this.session.snapshot();
    } catch (error) {
      // Only a definite "not there" ends the stream; a store that does not answer now may answer at the next beat.
      if ((error as { code?: unknown }).code === 'SESSION_NOT_FOUND') {
        this.fail({
          code: 'SESSION_NOT_FOUND',
          message: `session ${this.session.id} is no longer in the store (expired, deleted, or lost by the store); its stream ends`,
          seq: this.written,
        });
      }
    } finally {
      this.checking = false;
    }
  }

  /** Whether the session has finished and `seq` is its last event. */
  private async finishedAt(seq: number): Promise<boolean> {
    try {
      const snapshot = await this.session.snapshot();
      return FINISHED_STATUSES.has(snapshot.status) && snapshot.seq <= seq;
    } catch (error) {
      this.options.log({
        level: 'warn',
        code: 'SERVER_STREAM_STATUS',
        message: `could not read the status of session ${this.session.id}: ${(error as Error).message}`,
      });
      return false;
    }
  }
}
