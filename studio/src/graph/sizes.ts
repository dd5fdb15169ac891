import type { StateSpec } from '@flowing/spec';

/** Width of an atomic or final state node, in canvas pixels. */
export const NODE_WIDTH = 210;
/** Space around the children inside a compound state, and above them for its header. */
export const GROUP_PADDING = 24;
export const GROUP_HEADER = 40;

/** The drawn size of a state without children: taller when it shows tags or an invoke. */
export function leafSize(state: Pick<StateSpec, 'tags' | 'invoke'>): { width: number; height: number } {
  let height = 56;
  if (state.tags && state.tags.length > 0) height += 22;
  if (state.invoke) height += 26;
  return { width: NODE_WIDTH, height };
}
