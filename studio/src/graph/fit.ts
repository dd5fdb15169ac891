import { absoluteBoxes, FIT_ZOOM_FLOOR, type Box, type LayoutGeometry } from './geometry.ts';
import type { GraphNode } from './types.ts';

const PADDING = 24;
const MAX_FIT_ZOOM = 1.1;

/** The box holding every state, route and label of a machine, and the box of its first state to be entered. */
export function graphBounds(
  nodes: readonly GraphNode[],
  geometry: LayoutGeometry | undefined,
): { bounds: Box; start: Box | undefined } | undefined {
  const absolute = absoluteBoxes(nodes);
  // The initial leaf: the machine's initial state, then its initial child, down to a state without children.
  let start = nodes.find((n) => n.parentId === undefined && n.data.isInitial);
  for (let child = start; child; child = nodes.find((n) => n.parentId === start!.id && n.data.isInitial)) start = child;
  const boxes = [...absolute.values()];
  for (const edge of Object.values(geometry?.edges ?? {})) {
    if (edge.label) boxes.push(edge.label);
    for (const p of edge.points) boxes.push({ x: p.x, y: p.y, width: 0, height: 0 });
  }
  if (boxes.length === 0) return undefined;
  const left = Math.min(...boxes.map((b) => b.x));
  const top = Math.min(...boxes.map((b) => b.y));
  const bounds = {
    x: left,
    y: top,
    width: Math.max(...boxes.map((b) => b.x + b.width)) - left,
    height: Math.max(...boxes.map((b) => b.y + b.height)) - top,
  };
  return { bounds, start: start && absolute.get(start.id) };
}

/**
 * The viewport that shows a whole machine in a pane while keeping text legible: never below `FIT_ZOOM_FLOOR` (labels
 * stay at least 10 px on screen). A machine too large for that starts at its top (the initial state) and scrolls.
 */
export function fitViewport(
  found: { bounds: Box; start: Box | undefined },
  pane: { width: number; height: number },
): { x: number; y: number; zoom: number } {
  const { bounds, start } = found;
  const { width, height } = pane;
  const fit = Math.min(
    (width - 2 * PADDING) / Math.max(bounds.width, 1),
    (height - 2 * PADDING) / Math.max(bounds.height, 1),
    MAX_FIT_ZOOM,
  );
  const zoom = Math.max(fit, FIT_ZOOM_FLOOR);
  // Too wide: the initial state in the middle (the graph's edges kept inside the view); too tall: from the top.
  let x = (width - bounds.width * zoom) / 2 - bounds.x * zoom;
  if (bounds.width * zoom + 2 * PADDING > width) {
    const centre = start ? start.x + start.width / 2 : bounds.x;
    x = Math.min(PADDING - bounds.x * zoom, Math.max(width - PADDING - (bounds.x + bounds.width) * zoom, width / 2 - centre * zoom));
  }
  const y =
    bounds.height * zoom + 2 * PADDING <= height ? (height - bounds.height * zoom) / 2 - bounds.y * zoom : PADDING - bounds.y * zoom;
  return { x, y, zoom };
}
