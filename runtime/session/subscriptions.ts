import type { RuntimeEvent } from '../events.ts';

/** Called with each event of a session, once, in seq order. */
export type EventListener = (event: RuntimeEvent) => void;

interface Subscriber {
  lastSeq: number;
  catchingUp: boolean;
  buffer: RuntimeEvent[];
  listener: EventListener;
  closed: boolean;
}

/**
 * Live delivery of committed events. A subscriber first reads the store from its `fromSeq`, buffering live events
 * meanwhile, then switches to live delivery; seq checks make every event arrive exactly once, in order.
 */
export class Subscriptions {
  private readonly bySession = new Map<string, Set<Subscriber>>();

  constructor(private readonly read: (sessionId: string, afterSeq: number) => Promise<readonly RuntimeEvent[]>) {}

  subscribe(sessionId: string, fromSeq: number, listener: EventListener): () => void {
    const sub: Subscriber = { lastSeq: Math.max(0, Math.floor(fromSeq)), catchingUp: true, buffer: [], listener, closed: false };
    let subs = this.bySession.get(sessionId);
    if (!subs) this.bySession.set(sessionId, (subs = new Set()));
    subs.add(sub);
    void this.catchUp(sessionId, sub);
    return () => {
      sub.closed = true;
      const set = this.bySession.get(sessionId);
      set?.delete(sub);
      if (set?.size === 0) this.bySession.delete(sessionId);
    };
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
      const stored = await this.read(sessionId, sub.lastSeq);
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
