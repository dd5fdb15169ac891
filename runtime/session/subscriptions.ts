import { toFlowError, type FlowError } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';

/** Events a catching-up subscriber reads per query. */
export const CATCH_UP_PAGE_SIZE = 500;

/**
 * Called with each event of a session, once, in seq order. A listener that returns a promise paces the catch-up:
 * the next stored event is handed over (and the next page read) only once that promise settles, so a slow
 * consumer of a long log holds one page, not the log. Live events are handed over as they are committed: a
 * session is never held back by a subscriber. Anything else a listener returns is ignored.
 */
export type EventListener = (event: RuntimeEvent) => unknown;

/** Called once when a subscription ends because its stored events could not be read (code SUBSCRIPTION_FAILED). */
export type SubscriptionErrorListener = (error: FlowError) => void;

interface Subscriber {
  lastSeq: number;
  catchingUp: boolean;
  buffer: RuntimeEvent[];
  /** The highest seq of live events dropped because the buffer was full: they are read from the store instead. */
  droppedUpTo: number;
  listener: EventListener;
  onError?: SubscriptionErrorListener;
  closed: boolean;
}

/**
 * Live delivery of committed events. A subscriber first reads the store from its `fromSeq`, buffering live events
 * meanwhile, then switches to live delivery; seq checks make every event arrive exactly once, in order. The buffer
 * of a subscriber catching up holds at most one page: past that, live events are dropped and read from the store
 * later (every delivered event is stored first), so a catch-up paced by a slow listener cannot grow memory.
 */
export class Subscriptions {
  private readonly bySession = new Map<string, Set<Subscriber>>();

  /**
   * `read` answers at most `limit` events after a seq; a subscriber catching up on a long log reads it page by
   * page, delivering each before reading the next, so it never holds the whole log.
   */
  constructor(
    private readonly read: (sessionId: string, afterSeq: number, limit: number) => Promise<readonly RuntimeEvent[]>,
    /** Hears why a session's stored events could not be read (a damaged row, the store gone). */
    private readonly onUnreadable: (sessionId: string, error: FlowError) => void = () => {},
    private readonly pageSize = CATCH_UP_PAGE_SIZE,
  ) {}

  subscribe(sessionId: string, fromSeq: number, listener: EventListener, onError?: SubscriptionErrorListener): () => void {
    const sub: Subscriber = {
      lastSeq: Math.max(0, Math.floor(fromSeq)),
      catchingUp: true,
      buffer: [],
      droppedUpTo: 0,
      listener,
      closed: false,
    };
    if (onError) sub.onError = onError;
    let subs = this.bySession.get(sessionId);
    if (!subs) this.bySession.set(sessionId, (subs = new Set()));
    subs.add(sub);
    void this.catchUp(sessionId, sub);
    return () => this.close(sessionId, sub);
  }

  private close(sessionId: string, sub: Subscriber) {
    sub.closed = true;
    const set = this.bySession.get(sessionId);
    set?.delete(sub);
    if (set?.size === 0) this.bySession.delete(sessionId);
  }

  /**
   * A read of the store failed: the subscriber would otherwise buffer for ever and never hear of it. It is closed
   * and told (or, without an error listener, the process gets a warning with the code).
   */
  private fail(sessionId: string, sub: Subscriber, thrown: unknown) {
    if (sub.closed) return;
    this.close(sessionId, sub);
    const cause = toFlowError(thrown, 'STORE_UNAVAILABLE');
    this.onUnreadable(sessionId, cause);
    const error: FlowError = {
      code: 'SUBSCRIPTION_FAILED',
      message: `the events of session '${sessionId}' after seq ${sub.lastSeq} could not be read (${cause.code}: ${cause.message}); the subscription is closed, subscribe again from seq ${sub.lastSeq}`,
      details: { afterSeq: sub.lastSeq, cause },
    };
    if (!sub.onError) {
      process.emitWarning(error.message, { code: error.code });
      return;
    }
    try {
      sub.onError(error);
    } catch {
      // The subscription is closed either way; a throwing error listener must not break the others.
    }
  }

  deliver(sessionId: string, events: readonly RuntimeEvent[]) {
    const subs = this.bySession.get(sessionId);
    if (!subs || events.length === 0) return;
    for (const sub of subs) {
      if (sub.catchingUp) {
        this.buffer(sub, events);
        continue;
      }
      for (const event of events) {
        if (sub.closed) break; // a listener unsubscribed mid-batch: what follows is not a gap
        if (event.seq <= sub.lastSeq) continue;
        if (event.seq !== sub.lastSeq + 1) {
          // A gap means this subscriber missed a commit: read it from the store.
          sub.catchingUp = true;
          this.buffer(
            sub,
            events.filter((e) => e.seq > sub.lastSeq),
          );
          void this.catchUp(sessionId, sub);
          break;
        }
        // Live events are not paced: the listener's promise (its failure already handled) is not waited for.
        void this.emit(sub, event);
      }
    }
  }

  /** Keeps live events for a subscriber catching up, at most a page of them; the rest is read from the store. */
  private buffer(sub: Subscriber, events: readonly RuntimeEvent[]) {
    if (sub.buffer.length + events.length <= this.pageSize) {
      sub.buffer.push(...events);
      return;
    }
    for (const event of sub.buffer) sub.droppedUpTo = Math.max(sub.droppedUpTo, event.seq);
    for (const event of events) sub.droppedUpTo = Math.max(sub.droppedUpTo, event.seq);
    sub.buffer = [];
  }

  private async catchUp(sessionId: string, sub: Subscriber) {
    for (;;) {
      let stored: readonly RuntimeEvent[];
      try {
        stored = await this.read(sessionId, sub.lastSeq, this.pageSize);
      } catch (error) {
        await this.deliverBefore(sessionId, sub, error);
        this.fail(sessionId, sub, error);
        return;
      }
      if (sub.closed) return;
      const from = sub.lastSeq;
      for (const event of stored) {
        if (event.seq !== sub.lastSeq + 1) continue;
        await this.emitPaced(sub, event);
        if (sub.closed) return;
      }
      // A full page: more stored events may follow, and they come before the live ones buffered meanwhile. Live
      // events dropped from a full buffer are in the store too.
      if ((stored.length >= this.pageSize && sub.lastSeq > from) || sub.lastSeq < sub.droppedUpTo) continue;
      if (await this.drainBuffer(sub)) return;
      if (sub.closed) return;
    }
  }

  /**
   * Hands over the buffered live events in seq order, and those buffered while the listener was busy with them.
   * False when one is missing (a gap, or dropped from a full buffer): the store is read again. True once the
   * subscriber is live: it switches in the same step as its last check, so no live event can be buffered in between
   * and left there.
   */
  private async drainBuffer(sub: Subscriber): Promise<boolean> {
    while (sub.buffer.length > 0) {
      const buffered = sub.buffer.sort((a, b) => a.seq - b.seq);
      sub.buffer = [];
      for (const [i, event] of buffered.entries()) {
        if (event.seq <= sub.lastSeq) continue;
        if (event.seq !== sub.lastSeq + 1) {
          this.buffer(sub, buffered.slice(i));
          return false;
        }
        await this.emitPaced(sub, event);
        if (sub.closed) return false;
      }
    }
    if (sub.lastSeq < sub.droppedUpTo) return false;
    sub.catchingUp = false;
    return true;
  }

  /** A damaged event (`details.seq`) does not hide the readable ones before it: they are delivered first. */
  private async deliverBefore(sessionId: string, sub: Subscriber, error: unknown) {
    const seq = (toFlowError(error).details as { seq?: unknown } | undefined)?.seq;
    if (typeof seq !== 'number' || seq <= sub.lastSeq + 1) return;
    try {
      for (const event of await this.read(sessionId, sub.lastSeq, seq - 1 - sub.lastSeq)) {
        if (event.seq === sub.lastSeq + 1) await this.emitPaced(sub, event);
      }
    } catch {
      // Nothing more is readable; the failure that follows says so.
    }
  }

  /** Hands one event over; returns the listener's promise, if it gave one, with its failure already handled. */
  private emit(sub: Subscriber, event: RuntimeEvent): PromiseLike<void> | undefined {
    if (sub.closed) return undefined;
    sub.lastSeq = event.seq;
    try {
      const pending = sub.listener(event) as PromiseLike<void> | undefined;
      // A failing listener must not break delivery to others or the session itself.
      if (typeof pending?.then === 'function') return pending.then(undefined, () => {});
    } catch {
      // As above.
    }
    return undefined;
  }

  /** Hands one event over and waits until the listener has taken it (a catch-up goes at the listener's pace). */
  private async emitPaced(sub: Subscriber, event: RuntimeEvent): Promise<void> {
    const pending = this.emit(sub, event);
    if (pending) await pending;
  }
}
