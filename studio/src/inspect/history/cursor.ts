import { useInspect, viewedIndex } from '../inspect-store.ts';
import { findJump, stepCursor, type JumpTarget } from './jumps.ts';
import { markStepStart } from './perf.ts';

/**
 * Moves the inspector's cursor to the event at `index` (clamped to the log), from recorded events only: every view
 * re-renders from the log in memory, nothing is fetched. Marks the step for the performance figures.
 */
export function moveCursorTo(index: number): void {
  const state = useInspect.getState();
  if (state.events.length === 0) return;
  const target = stepCursor(index, 0, state.events.length);
  if (target === state.cursor) return;
  markStepStart();
  state.setCursor(target);
}

/** Steps the cursor by `delta` events from where the views are (the last event when following live). */
export function stepBy(delta: number): void {
  const state = useInspect.getState();
  moveCursorTo(stepCursor(viewedIndex(state), delta, state.events.length));
}

/** Moves the cursor to the next (or previous) rejection, tool call or error; returns false when there is none. */
export function jumpTo(target: JumpTarget, direction: 1 | -1): boolean {
  const state = useInspect.getState();
  const found = findJump(state.events, viewedIndex(state), target, direction);
  if (found === undefined) return false;
  moveCursorTo(found);
  return true;
}
