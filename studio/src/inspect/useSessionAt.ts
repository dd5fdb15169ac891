import { EMPTY_SESSION_AT, foldEvent, type RuntimeEvent, type SessionAt } from '@flowing/protocol';
import { useMemo, useRef } from 'react';

const CHECKPOINT_EVERY = 256;

interface Cache {
  first: RuntimeEvent | undefined;
  /** Folded views after events[k * CHECKPOINT_EVERY - 1] (index 0: before any event). */
  checkpoints: SessionAt[];
}

/**
 * The session right after `events[index]` (@flowing/protocol's `sessionAt` at that event's seq) for a log that grows
 * at its end: folded views are kept every 256 events, so following a live session or stepping costs at most 256
 * applications instead of a fold from the start. A different log (another session, a file) starts a new cache.
 */
export function useSessionAt(events: readonly RuntimeEvent[], index: number): SessionAt {
  const cache = useRef<Cache>({ first: undefined, checkpoints: [EMPTY_SESSION_AT] });
  return useMemo(() => {
    const c = cache.current;
    if (c.first !== events[0] || (c.checkpoints.length - 1) * CHECKPOINT_EVERY > events.length) {
      cache.current = { first: events[0], checkpoints: [EMPTY_SESSION_AT] };
    }
    const { checkpoints } = cache.current;
    const last = Math.min(index, events.length - 1);
    if (last < 0) return EMPTY_SESSION_AT;
    // Extend the checkpoints up to the one at or before `last`.
    const wanted = Math.floor((last + 1) / CHECKPOINT_EVERY);
    while (checkpoints.length - 1 < wanted) {
      const k = checkpoints.length - 1;
      let view = checkpoints[k]!;
      for (let i = k * CHECKPOINT_EVERY; i < (k + 1) * CHECKPOINT_EVERY; i++) view = foldEvent(view, events[i]!);
      checkpoints.push(view);
    }
    let view = checkpoints[wanted]!;
    for (let i = wanted * CHECKPOINT_EVERY; i <= last; i++) view = foldEvent(view, events[i]!);
    return view;
  }, [events, index]);
}
