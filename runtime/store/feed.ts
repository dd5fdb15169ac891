import type { RuntimeEvent } from '../events.ts';
import type { StoreFeedListener } from './types.ts';

interface Follower {
  cursor: number;
  listener: StoreFeedListener;
}

/**
 * The followers of a shared store's live feed, by session. A driver (SQLite's poller, Redis's XREAD loop) asks where
 * to read from (`cursors`) and hands what it read to `dispatch`; each follower gets every event after its own cursor
 * exactly once from the feed, in order, whatever the driver reads twice.
 */
export class FeedFollowers {
  private readonly bySession = new Map<string, Set<Follower>>();
  /** Called when the set of followed sessions or their cursors changed (a blocked reader re-issues its read). */
  onChange: () => void = () => {};

  add(sessionId: string, afterSeq: number, listener: StoreFeedListener): () => void {
    const follower: Follower = { cursor: Math.max(0, Math.floor(afterSeq) || 0), listener };
    let set = this.bySession.get(sessionId);
    if (!set) this.bySession.set(sessionId, (set = new Set()));
    set.add(follower);
    this.onChange();
    return () => {
      const current = this.bySession.get(sessionId);
      if (!current?.delete(follower)) return;
      if (current.size === 0) this.bySession.delete(sessionId);
      this.onChange();
    };
  }

  get size(): number {
    return this.bySession.size;
  }

  /** Each followed session with the lowest cursor among its followers: the driver reads after it. */
  cursors(): Array<[sessionId: string, afterSeq: number]> {
    const out: Array<[string, number]> = [];
    for (const [sessionId, set] of this.bySession) {
      let min = Number.POSITIVE_INFINITY;
      for (const f of set) min = Math.min(min, f.cursor);
      out.push([sessionId, min]);
    }
    return out;
  }

  /** Hands events read from the store (in seq order) to the session's followers, each from its own cursor. */
  dispatch(sessionId: string, events: readonly RuntimeEvent[]) {
    const set = this.bySession.get(sessionId);
    if (!set || events.length === 0) return;
    for (const follower of [...set]) {
      const fresh = events.filter((e) => e.seq > follower.cursor);
      if (fresh.length === 0) continue;
      follower.cursor = fresh[fresh.length - 1]!.seq;
      try {
        follower.listener(fresh);
      } catch {
        // One failing listener must not stop the feed for the others.
      }
    }
  }
}
