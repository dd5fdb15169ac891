import { EMPTY_SESSION_AT, foldEvent, type RuntimeEvent, type SessionAt } from '@flowing/protocol';

/**
 * The session at any event of a log, folded once: each event's view is computed the first time a cursor reaches it
 * and kept, so stepping (either way) costs one lookup and a live log that grows only folds its new events. A log
 * that is not the extension of the cached one (another session, a file) starts a new fold.
 * @example
 * const cache = new FoldCache();
 * cache.at(events, 2); // the session right after events[2]
 */
export class FoldCache {
  private events: readonly RuntimeEvent[] = [];
  private views: SessionAt[] = [];

  /** The session right after `events[index]`; below 0, before the first event; past the end, after the last. */
  at(events: readonly RuntimeEvent[], index: number): SessionAt {
    if (events.length === 0 || index < 0) return EMPTY_SESSION_AT;
    this.adopt(events);
    const last = Math.min(index, events.length - 1);
    let view = this.views.length > 0 ? this.views[this.views.length - 1]! : EMPTY_SESSION_AT;
    for (let i = this.views.length; i <= last; i++) {
      view = foldEvent(view, events[i]!);
      this.views.push(view);
    }
    return this.views[last]!;
  }

  /** How many events have a folded view (for tests and the performance figures). */
  get folded(): number {
    return this.views.length;
  }

  /** Keeps the folded views when `events` extends the cached log (same event objects); forgets them otherwise. */
  private adopt(events: readonly RuntimeEvent[]): void {
    if (events === this.events) return;
    const kept = this.views.length;
    const extends_ = kept === 0 || (events.length >= kept && events[kept - 1] === this.events[kept - 1] && events[0] === this.events[0]);
    if (!extends_) this.views = [];
    this.events = events;
  }
}
