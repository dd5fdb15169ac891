import { toFlowError, type FlowError } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';

/** Called with each event of a session, once, in seq order. */
export type EventListener = (event: RuntimeEvent) => void;

/** Called once when a subscription ends because its stored events could not be read (code SUBSCRIPTION_FAILED). */
export type SubscriptionErrorListener = (error: FlowError) => void;

interface Subscriber {
  lastSeq: number;
  catchingUp: boolean;
  buffer: RuntimeEvent[];
  listener: EventListener;
  onError?: SubscriptionErrorListener;
  closed: boolean;
}

/**
 * Live delivery of committed events. A subscriber first reads the store from its `fromSeq`, buffering live events
 * meanwhile, then switches to live delivery; seq checks make every event arrive exactly once, in order.
 */
export class Subscriptions {
  private readonly bySession = new Map<string, Set<Subscriber>>();

  constructor(
    private readonly read: (sessionId: string, afterSeq: number, limit?: number) => Promise<readonly RuntimeEvent[]>,
    /** Hears why a session's stored events could not be read (a damaged row, the store gone). */
    private readonly onUnreadable: (sessionId: string, error: FlowError) => void = () => {},
  ) {}

  subscribe(sessionId: string, fromSeq: number, listener: EventListener, onError?: SubscriptionErrorListener): () => void {
    const sub: Subscriber = { lastSeq: Math.max(0, Math.floor(fromSeq)), catchingUp: true, buffer: [], listener, closed: false };
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
        sub.buffer.push(...events);
        continue;
      }
      for (const event of events) {
        if (sub.closed) break; // a listener unsubscribed mid-batch: what follows is not a gap
        if (event.seq <= sub.lastSeq) continue;
        if (event.seq !== sub.lastSeq + 1) {
          // A gap means this subscriber missed a commit: read it from the store.
          sub.catchingUp = true;
          sub.buffer.push(...events.filter((e) => e.seq > sub.lastSeq));
          void this.catchUp(sessionId, sub);
          break;
        }
        this.emit(sub, event);
      }
    }
  }

  private async catchUp(sessionId: string, sub: Subscriber) {
    for (;;) {
      let stored: readonly RuntimeEvent[];
      try {
        stored = await this.read(sessionId, sub.lastSeq);
      } catch (error) {
        await this.deliverBefore(sessionId, sub, error);
        this.fail(sessionId, sub, error);
        return;
      }
      if (sub.closed) return;
      for (const event of stored) if (event.seq === sub.lastSeq + 1) this.emit(sub, event);
      const buffered = sub.buffer.sort((a, b) => a.seq - b.seq);
      sub.buffer = [];
      let gap = false;
      for (const event of buffered) {
        if (event.seq <= sub.lastSeq) continue;
        if (event.seq !== sub.lastSeq + 1) {
          gap = true;
          sub.buffer = buffered.filter((e) => e.seq > sub.lastSeq);
          break;
        }
        this.emit(sub, event);
      }
      if (!gap) {
        sub.catchingUp = false;
        return;
      }
    }
  }

  /** A damaged event (`details.seq`) does not hide the readable ones before it: they are delivered first. */
  private async deliverBefore(sessionId: string, sub: Subscriber, error: unknown) {
    const seq = (toFlowError(error).details as { seq?: unknown } | undefined)?.seq;
    if (typeof seq !== 'number' || seq <= sub.lastSeq + 1) return;
    try {
      for (const event of await this.read(sessionId, sub.lastSeq, seq - 1 - sub.lastSeq)) {
        if (event.seq === sub.lastSeq + 1) this.emit(sub, event);
      }
    } catch {
      // Nothing more is readable; the failure that follows says so.
    }
  }

  private emit(sub: Subscriber, event: RuntimeEvent) {
    if (sub.closed) return;
    sub.lastSeq = event.seq;
    try {
      sub.listener(event);
    } catch {
      // A failing listener must not break delivery to others or the session itself.
    }
  }
}
