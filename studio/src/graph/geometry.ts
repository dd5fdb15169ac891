import type { Position } from '@flowing/spec';

/** A point in canvas coordinates. */
export interface Point {
  x: number;
  y: number;
}

/** A rectangle in canvas coordinates (top-left corner and size). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Where an edge runs and where its label sits, as the layout placed them (absolute canvas coordinates). */
export interface EdgeGeometry {
  /** The route from the source port to the target port, bends included. */
  points: Point[];
  /** The label box the layout reserved (nothing else is placed on it). */
  label: Box | undefined;
  /** The label lines the box was sized for: a changed label no longer fits it. */
  text: string;
}

/** A laid-out machine: state positions for the spec, and the routes, labels and ports that go with them. */
export interface LayoutGeometry {
  /** Positions relative to the parent state, sizes of compound states: the spec's `layout`. */
  layout: Record<string, Position>;
  /** Absolute box of every state, by node id (to tell which routes still fit after a state moved). */
  nodes: Record<string, Box>;
  /** Route and label of every transition, by edge id. */
  edges: Record<string, EdgeGeometry>;
  /** The done and error ports of invoke blocks, relative to their state's box. */
  ports: Record<string, { done?: Point; error?: Point }>;
}

/** Measures the drawn size of an edge label's lines (the browser measures its font; tests use the estimate). */
export type LabelMeasure = (lines: readonly string[]) => { width: number; height: number };

/** Font size of edge labels in canvas pixels; fit-view never zooms out so far that it renders below 10 px. */
export const LABEL_FONT_PX = 12;
export const LABEL_LINE_PX = 16;
export const LABEL_PAD_X = 6;
export const LABEL_PAD_Y = 3;
/** The lowest zoom fit-view picks: labels stay at least 10.2 px on screen; a larger machine scrolls instead. */
export const FIT_ZOOM_FLOOR = 0.85;

/** A label size from a monospace character width (0.6 em), used where no browser can measure. */
export const estimateLabel: LabelMeasure = (lines) => ({
  width: Math.ceil(Math.max(1, ...lines.map((l) => l.length)) * LABEL_FONT_PX * 0.62 + 2 * LABEL_PAD_X + 2),
  height: lines.length * LABEL_LINE_PX + 2 * LABEL_PAD_Y + 2,
});

/** Absolute boxes of states from the spec's relative positions (parents first, as `specToGraph` lists them). */
export function absoluteBoxes(
  nodes: ReadonlyArray<{ id: string; parentId?: string; position: Point; width: number; height: number }>,
): Map<string, Box> {
  const out = new Map<string, Box>();
  for (const node of nodes) {
    const parent = node.parentId === undefined ? undefined : out.get(node.parentId);
    out.set(node.id, {
      x: (parent?.x ?? 0) + node.position.x,
      y: (parent?.y ?? 0) + node.position.y,
      width: node.width,
      height: node.height,
    });
  }
  return out;
}

const same = (a: Box | undefined, b: Box | undefined) =>
  !!a &&
  !!b &&
  Math.abs(a.x - b.x) < 0.5 &&
  Math.abs(a.y - b.y) < 0.5 &&
  Math.abs(a.width - b.width) < 0.5 &&
  Math.abs(a.height - b.height) < 0.5;

/**
 * The laid-out route of an edge while it still fits: both ends where the layout put them and the same label text.
 * After a state is dragged or a label edited, its edges are drawn plainly until the next auto-layout.
 */
export function routeIfCurrent(
  geometry: LayoutGeometry | undefined,
  edge: { id: string; source: string; target: string; text: string },
  boxes: Map<string, Box>,
): EdgeGeometry | undefined {
  const route = geometry?.edges[edge.id];
  if (!route || route.text !== edge.text) return undefined;
  if (!same(geometry!.nodes[edge.source], boxes.get(edge.source)) || !same(geometry!.nodes[edge.target], boxes.get(edge.target)))
    return undefined;
  return route;
}
