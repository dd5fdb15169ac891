import type { FlowSpec, Position, StateType, TransitionObject } from '@flowing/spec';
import type { BranchOrder } from './labels.ts';

/** Where a transition lives in its state: an `on` event, an `after` delay, `always`, the state's `onDone`, or the invoke's `onDone`/`onError`. */
export type TransitionKind = 'on' | 'after' | 'always' | 'done' | 'onDone' | 'onError';

/** How the transition value was written: a bare target string, one object, or a guarded list. */
export type TransitionForm = 'string' | 'object' | 'array';

/** Stands in for a transition value inside a state skeleton; the edges hold the transitions themselves. */
export interface TransitionSlot {
  $slot: TransitionForm;
  count: number;
}

/** A state object without its children and with its transition values replaced by slots. */
export type StateSkeleton = Record<string, unknown>;

/** Data carried by a state node: everything needed to rebuild the state, plus display facts. */
export interface StateNodeData {
  [key: string]: unknown;
  name: string;
  /** Names from the top-level state down to this one. */
  path: string[];
  /** The `layout` key: the path joined with dots. */
  layoutKey: string;
  /** JSON pointer to the state in the spec (also the node id). */
  pointer: string;
  type: StateType;
  skeleton: StateSkeleton;
  /** The saved position (relative to the parent state), when the spec has one. */
  layout: Position | undefined;
  /** True when the parent (or the machine) names this state as its initial state. */
  isInitial: boolean;
  /** True when the parent state is parallel: this state is one of its regions. */
  isRegion: boolean;
  depth: number;
}

/** Data carried by a transition edge: the transition object and where it sits. */
export interface TransitionEdgeData {
  [key: string]: unknown;
  kind: TransitionKind;
  /** Event name (`on`) or delay in ms (`after`). */
  key: string | undefined;
  form: TransitionForm;
  /** Position in a guarded list (0 for the other forms). */
  index: number;
  /** JSON pointer to the transition value list (`.../on/EVENT`). */
  sitePointer: string;
  /** JSON pointer to this transition (also the edge id). */
  pointer: string;
  transition: TransitionObject;
  sourceName: string;
  /** The label on one line: `EVENT [guard]` (lists and tooltips). */
  label: string;
  /** The label as drawn on the canvas: the kind with its branch order, then the (elided) guard. */
  lines: string[];
  /** The whole label text, guard unabridged (the canvas label's tooltip). */
  fullLabel: string;
  /** Order in its list (first match wins) and whether it is the fallback. */
  branch: BranchOrder;
  /** True when the target is missing: drawn back to its source as an internal transition. */
  internal: boolean;
  /** True when the target names no state. */
  dangling: boolean;
  /** Among edges between the same two nodes, this one's rank (for spreading them apart). */
  lane: number;
  lanes: number;
}

/** A node in the shape React Flow takes (without React). */
export interface GraphNode {
  id: string;
  type: 'state';
  position: { x: number; y: number };
  parentId?: string;
  width: number;
  height: number;
  data: StateNodeData;
}

/** An edge in the shape React Flow takes (without React). */
export interface GraphEdge {
  id: string;
  type: 'transition';
  source: string;
  target: string;
  /** The port an edge leaves from: `done` or `error` of the state's invoke block; the state itself otherwise. */
  sourceHandle?: 'done' | 'error';
  data: TransitionEdgeData;
}

/** A spec as a graph: nodes in document order (parents first), edges in document order, and the rest of the spec. */
export interface SpecGraph {
  /** The spec without states and layout. */
  meta: Omit<FlowSpec, 'states' | 'layout'> & Record<string, unknown>;
  /** The order of the `layout` keys, or undefined when the spec has no layout. */
  layoutOrder: string[] | undefined;
  /** Layout entries that name no state (kept so that nothing is lost). */
  orphanLayout: Record<string, Position>;
  nodes: GraphNode[];
  edges: GraphEdge[];
}
