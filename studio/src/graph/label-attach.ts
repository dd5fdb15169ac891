import type { Box, EdgeGeometry, Point } from './geometry.ts';

/** How far into a label its edge must run when the label cannot be centred on it, in canvas pixels. */
const MIN_INSET = 12;
/** Gap kept between a moved label and any other label, state or edge. */
const CLEARANCE = 2;

type Segment = { a: Point; b: Point };

const segmentsOf = (points: readonly Point[]): Segment[] => points.slice(1).map((b, i) => ({ a: points[i]!, b }));

const overlaps = (a: Box, b: Box, gap: number) =>
  a.x - gap < b.x + b.width && b.x - gap < a.x + a.width && a.y - gap < b.y + b.height && b.y - gap < a.y + a.height;

/** The box around a route's points. */
function boundsOf(points: readonly Point[]): Box {
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

/** Whether an axis-parallel segment crosses a box (grown by `gap`). */
function crosses(segment: Segment, box: Box, gap: number): boolean {
  const left = Math.min(segment.a.x, segment.b.x);
  const right = Math.max(segment.a.x, segment.b.x);
  const top = Math.min(segment.a.y, segment.b.y);
  const bottom = Math.max(segment.a.y, segment.b.y);
  return left <= box.x + box.width + gap && right >= box.x - gap && top <= box.y + box.height + gap && bottom >= box.y - gap;
}

/** The vertical segment of a route that runs alongside a label (beside it, over its height), nearest first. */
function besideSegment(points: readonly Point[], label: Box): Segment | undefined {
  let best: { segment: Segment; distance: number } | undefined;
  for (const segment of segmentsOf(points)) {
    if (segment.a.x !== segment.b.x) continue;
    const top = Math.min(segment.a.y, segment.b.y);
    const bottom = Math.max(segment.a.y, segment.b.y);
    if (top > label.y || bottom < label.y + label.height) continue;
    const x = segment.a.x;
    const distance = x < label.x ? label.x - x : x > label.x + label.width ? x - label.x - label.width : 0;
    if (!best || distance < best.distance) best = { segment, distance };
  }
  return best?.segment;
}

/**
 * Puts each edge label on its own edge. elkjs (layered) reserves a label's box in a row between two layers, beside
 * the edge's vertical run, so a row of labels reads as belonging to whichever line is nearest. Each label is moved
 * sideways until its edge runs through its middle, or at least `MIN_INSET` into it, whichever position touches no
 * other label, state or edge; a label that has no free position keeps the one elkjs gave it.
 * @param edges routes and labels by edge id (absolute canvas coordinates); changed in place
 * @param states absolute boxes of the states
 */
export function attachLabelsToEdges(edges: Record<string, EdgeGeometry>, states: readonly Box[]): void {
  const entries = Object.entries(edges);
  // Each route's segments and the box around them, once: a 300-state machine checks ~500 routes per moved label.
  const routes = entries.map(([id, edge]) => ({ id, edge, segments: segmentsOf(edge.points), bounds: boundsOf(edge.points) }));
  for (const [id, edge] of entries) {
    const label = edge.label;
    if (!label) continue;
    const segment = besideSegment(edge.points, label);
    if (!segment || (segment.a.x > label.x + MIN_INSET && segment.a.x < label.x + label.width - MIN_INSET)) continue;
    const x = segment.a.x;
    const candidates = [x - label.width / 2, x < label.x ? x - MIN_INSET : x - label.width + MIN_INSET];
    const free = (box: Box) =>
      states.every((s) => !overlaps(box, s, CLEARANCE)) &&
      routes.every(
        (other) =>
          other.id === id ||
          ((!other.edge.label || !overlaps(box, other.edge.label, CLEARANCE)) &&
            (!overlaps(box, other.bounds, CLEARANCE + 1) || other.segments.every((s) => !crosses(s, box, CLEARANCE)))),
      );
    for (const left of candidates) {
      const moved = { ...label, x: Math.round(left * 10) / 10 };
      if (free(moved)) {
        edge.label = moved;
        break;
      }
    }
  }
}
