import type { RuntimeEvent } from '@flowing/protocol';

/** What the jump buttons look for. */
export type JumpTarget = 'rejection' | 'tool' | 'error';

const MATCHES: Record<JumpTarget, (event: RuntimeEvent) => boolean> = {
  rejection: (e) => e.type === 'transition.rejected',
  tool: (e) => e.type === 'tool.started',
  // A refused call result, a failed call and an outcome nobody knows all need a person's eyes, like a logged error.
  error: (e) => e.type === 'error' || e.type === 'tool.failed' || e.type === 'llm.failed' || e.type === 'tool.unknown_outcome',
};

/** Whether `event` is one the jump to `target` stops at. */
export function isJumpTarget(event: RuntimeEvent, target: JumpTarget): boolean {
  return MATCHES[target](event);
}

/**
 * The index of the next (`direction` 1) or previous (-1) event after `from` that matches `target`, or undefined when
 * there is none. `from` may be -1 (before the first event).
 * @example findJump(events, cursor, 'rejection') // the next rejected transition after the cursor
 */
export function findJump(events: readonly RuntimeEvent[], from: number, target: JumpTarget, direction: 1 | -1 = 1): number | undefined {
  const match = MATCHES[target];
  for (let i = from + direction; i >= 0 && i < events.length; i += direction) if (match(events[i]!)) return i;
  return undefined;
}

/** A step of the cursor: by `delta` events, clamped to the log (an empty log has only -1). */
export function stepCursor(index: number, delta: number, length: number): number {
  if (length === 0) return -1;
  return Math.max(0, Math.min(length - 1, index + delta));
}
