import type { StateSpec } from '@flowing/spec';
import { memoryLine } from './memory-line.ts';

/** Width of an atomic or final state node, in canvas pixels. */
export const NODE_WIDTH = 220;
/** Space around the children inside a compound state, and above them for its header. */
export const GROUP_PADDING = 24;
export const GROUP_HEADER = 40;

/** Heights of the parts of a state node (StateNode.tsx draws them with the same numbers, see styles.css). */
export const NODE_PARTS = {
  base: 44,
  tags: 22,
  /** The invoke block of a tool: title, two rows of contract badges, the done/error port row. */
  toolBlock: 92,
  /** The invoke block of a model call: title, one row of badges, the port row. */
  modelBlock: 72,
  /** Under a model call's badges: what it keeps of its conversation (graph/memory-line.ts). */
  memoryLine: 18,
} as const;

/** The drawn size of a state without children: taller when it shows tags, an invoke block, and a call's memory line. */
export function leafSize(state: Pick<StateSpec, 'tags' | 'invoke'>): { width: number; height: number } {
  let height: number = NODE_PARTS.base;
  if (state.tags && state.tags.length > 0) height += NODE_PARTS.tags;
  if (state.invoke) height += 'tool' in state.invoke ? NODE_PARTS.toolBlock : NODE_PARTS.modelBlock;
  if (memoryLine(state.invoke)) height += NODE_PARTS.memoryLine;
  return { width: NODE_WIDTH, height };
}

/**
 * From this many states on a machine counts as large: the canvas renders only the states in view, and opening it
 * draws the saved places (or, without any, the quick placement) at once, the routes (or the elkjs layout) following
 * from the layout worker; a smaller machine is laid out in a fraction of a second, so it opens with its routes.
 */
export const LARGE_MACHINE_STATES = 120;
