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
  /** Events and bytes that may wait for the client; past either it is cut off with SSE_CLIENT_TOO_SLOW. */
  maxLag: { bytes: number; events: number; closeAfterMs: number };
  /** Closes the connection of a client cut off for being too slow, unless it has read everything by then. */
  closeConnection: () => void;
}

/** The data of the `error` event that ends a stream which cannot go on: a code, a message and the seq concerned. */
export interface StreamError extends FlowError {
  /** The damaged event's seq (FLOW_STORE_CORRUPT), else the last seq written. */
  seq: number;
}

/** One event as it goes on the wire, the same framing as Hono's writeSSE (JSON data has no line breaks). */
interface Frame {
  seq: number;
  type: string;
  text: string;
  bytes: number;
}

function frameOf(event: RuntimeEvent): Frame {
  const text = `event: ${event.type}\ndata: ${JSON.stringify(event)}\nid: ${event.seq}\n\n`;
  return { seq: event.seq, type: event.type, text, bytes: Buffer.byteLength(text) };
}

/**
 * Writes a session's events with `seq > afterSeq` to an SSE stream, once and in order (`id:` = seq, `event:` = type,
 * `data:` = the JSON envelope), with a `retry:` hint first and a `:` comment every `heartbeatMs`. The subscription
 * reads stored events first and then live ones, so a reconnect with Last-Event-ID continues exactly after it.
 * A stream that cannot go on (a damaged event row, a session gone from the store) ends with an `error` event (no
 * id: it is not a log event) whose data is a StreamError.
 *
 * Writes wait for the connection to take them (the socket drains), so stored events are read at the client's pace.
 * Live events wait in a queue bounded by `maxLag`: a client that falls further behind is sent SSE_CLIENT_TOO_SLOW
 * after what it was written, and disconnected; the session is not held back by it.
 */
export class EventPipe {
  private queue: Frame[] = [];
  private queuedBytes = 0;
  private wake?: () => void;
  /** Resolves when the queue is empty: what a catching-up subscription waits on before handing over more. */
  private drained?: { promise: Promise<void>; resolve: () => void };
  private written: number;
  private readonly seqWaiters: Array<{ seq: number; resolve: () => void }> = [];
  private stopped = false;
  private cut = false;
  private pendingWrites = 0;
  /** The seq of the event being written, until the connection has taken it. */
  private writingSeq?: number;
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

  /** Whether the client was cut off for falling more than `maxLag` behind. */
  get cutOff(): boolean {
    return this.cut;
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
    this.queue = [];
    this.queuedBytes = 0;
    this.wake?.();
    this.drained?.resolve();
    for (const waiter of this.seqWaiters.splice(0)) waiter.resolve();
  }

  /** Writes to the stream, counting writes the connection has not taken yet. */
  private async write(text: string): Promise<void> {
    this.pendingWrites++;
    try {
      await this.stream.write(text);
    } finally {
      this.pendingWrites--;
    }
  }

  /** The subscription's listener: queues the event and answers when the queue has been written. */
  private take(event: RuntimeEvent): Promise<void> | undefined {
    if (this.stopped) return undefined;
    const frame = frameOf(event);
    this.queue.push(frame);
    this.queuedBytes += frame.bytes;
    if (this.queue.length > this.options.maxLag.events || this.queuedBytes > this.options.maxLag.bytes) {
      this.cutOffTooSlow();
      return undefined;
    }
    this.wake?.();
    if (!this.drained) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.drained = { promise, resolve };
    }
    return this.drained.promise;
  }

  private async run(afterSeq: number): Promise<void> {
    // A bare `retry:` field (no data line) sets the client's reconnection time without dispatching a message.
    await this.write(`retry: ${this.options.retryMs}\n\n`);
    this.heartbeat = setInterval(() => {
      // A client that has not taken the last write needs no keep-alive, and comments must not pile up for it.
      if (this.pendingWrites === 0) void this.write(': keep-alive\n\n');
      void this.checkSessionExists();
    }, this.options.heartbeatMs);
    this.heartbeat.unref?.();
    this.unsubscribe = this.session.subscribe(
      afterSeq,
      (event) => this.take(event),
      (error) => {
        const cause = ((error.details as { cause?: FlowError } | undefined)?.cause ?? error) as FlowError;
        const seq = (cause.details as { seq?: unknown } | undefined)?.seq;
        this.fail({ code: cause.code, message: cause.message, seq: typeof seq === 'number' ? seq : this.written + 1 });
      },
    );
    let endingSeen = false;
    while (!this.stopped) {
      const frame = this.queue[0];
      if (!frame && this.failure) {
        await this.stream.writeSSE({ event: 'error', data: JSON.stringify(this.failure) });
        break;
      }
      if (!frame) {
        const drained = this.drained;
        this.drained = undefined;
        drained?.resolve();
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      this.writingSeq = frame.seq;
      await this.write(frame.text);
      this.writingSeq = undefined;
      if (this.stopped) break;
      this.queue.shift();
      this.queuedBytes -= frame.bytes;
      this.written = frame.seq;
      for (let i = this.seqWaiters.length - 1; i >= 0; i--) {
        if (this.seqWaiters[i]!.seq <= frame.seq) this.seqWaiters.splice(i, 1)[0]!.resolve();
      }
      // Events may follow the one that ended the session (a cancelled call reports its failure after), so once an
      // ending event was seen, the store decides when the last one was written.
      if (TERMINAL_EVENT_TYPES.has(frame.type) || frame.type === 'error') endingSeen = true;
      if (this.options.endWhenFinished && endingSeen && this.queue.length === 0 && (await this.finishedAt(frame.seq))) break;
    }
    this.stop();
  }

  /**
   * The client is more than `maxLag` behind: what waits for it is dropped, the `error` event goes after what the
   * connection already holds, and the connection is closed if the client does not read it within `closeAfterMs`.
   */
  private cutOffTooSlow() {
    const lag = { events: this.queue.length, bytes: this.queuedBytes };
    // The event being written stays: it is already in the stream, before the error event.
    const lastSeq = this.writingSeq ?? this.written;
    this.cut = true;
    this.stop();
    const { maxLag } = this.options;
    const error: StreamError = {
      code: 'SSE_CLIENT_TOO_SLOW',
      message: `the client fell more than ${maxLag.events} events or ${maxLag.bytes} bytes behind the session; reconnect with Last-Event-ID ${lastSeq} to go on`,
      seq: lastSeq,
    };
    this.options.log({
      level: 'warn',
      code: error.code,
      message: `stream of session ${this.session.id} cut off after event ${lastSeq}: ${lag.events} events (${lag.bytes} bytes) waited for the client`,
      sessionId: this.session.id,
      lag,
    });
    void this.stream.writeSSE({ event: 'error', data: JSON.stringify(error) });
    setTimeout(() => this.options.closeConnection(), maxLag.closeAfterMs).unref?.();
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
