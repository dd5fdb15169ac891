import type { FlowSpec, Position } from '@flowing/spec';
import type { Box } from './geometry.ts';
import { GROUP_PADDING } from './sizes.ts';
import { nodesByParent, specToGraph } from './spec-to-graph.ts';
import type { GraphNode } from './types.ts';

/** Space kept between a placed state and its siblings (the layout's own spacing between layers). */
const GAP_X = 60;
const GAP_Y = 48;
/** How many free spots are tried beside the preferred one before a state goes right of all its siblings. */
const TRIES = 24;

/** Layout keys of states that have no saved position. */
export function statesWithoutLayout(spec: FlowSpec): string[] {
  return specToGraph(spec)
    .nodes.filter((n) => !n.data.layout)
    .map((n) => n.data.layoutKey);
}

const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width + GAP_X / 2 &&
  b.x < a.x + a.width + GAP_X / 2 &&
  a.y < b.y + b.height + GAP_Y / 2 &&
  b.y < a.y + a.height + GAP_Y / 2;

/**
 * Places the states that have no saved position next to their neighbours, keeping every other state exactly where it
 * is: below a sibling that leads into it (else above one it leads to, else right of all its siblings), moved sideways
 * until it overlaps no sibling; compound states around their new children; parents grown to hold what was placed in
 * them. This is the layout after an edit or a hand-written addition: no elkjs run, so it takes milliseconds at 300
 * states. A machine with no saved position at all gets the elkjs layout instead.
 * @example const placed = fillMissingLayout(spec)
 */
export function fillMissingLayout(spec: FlowSpec): FlowSpec {
  const graph = specToGraph(spec);
  const unplaced = graph.nodes.filter((n) => !n.data.layout);
  if (unplaced.length === 0) return spec;
  const layout: Record<string, Position> = { ...(spec.layout ?? {}) };
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const children = nodesByParent(graph.nodes);
  const placed = new Set(graph.nodes.filter((n) => n.data.layout).map((n) => n.id));

  // Sizes as drawn: saved ones, else a compound state's from its children as placed so far (see specToGraph).
  // Cached per state; placing a state drops the cached sizes of its ancestors.
  const sizes = new Map<string, { width: number; height: number }>();
  const size = (node: GraphNode): { width: number; height: number } => {
    const cached = sizes.get(node.id);
    if (cached) return cached;
    const saved = layout[node.data.layoutKey];
    let result = { width: node.width, height: node.height };
    if (saved?.width !== undefined && saved.height !== undefined) result = { width: saved.width, height: saved.height };
    else {
      const inner = (children.get(node.id) ?? []).filter((c) => placed.has(c.id)).map((c) => boxOf(c));
      if (inner.length > 0)
        result = {
          width: Math.max(node.width, ...inner.map((b) => b.x + b.width + GROUP_PADDING)),
          height: Math.max(node.height, ...inner.map((b) => b.y + b.height + GROUP_PADDING)),
        };
    }
    sizes.set(node.id, result);
    return result;
  };
  const boxOf = (node: GraphNode): Box => {
    const at = layout[node.data.layoutKey] ?? node.position;
    return { x: at.x, y: at.y, ...size(node) };
  };
  // The sibling (or the sibling holding it) at the other end of each transition into and out of a state.
  const atLevel = (id: string, parentId: string | undefined): GraphNode | undefined => {
    for (let node = byId.get(id); node; node = node.parentId === undefined ? undefined : byId.get(node.parentId))
      if (node.parentId === parentId) return node;
    return undefined;
  };
  const neighbours = (node: GraphNode, direction: 'in' | 'out') =>
    graph.edges
      .filter((e) => !e.data.dangling && (direction === 'in' ? e.target === node.id : e.source === node.id))
      .map((e) => atLevel(direction === 'in' ? e.source : e.target, node.parentId))
      .filter((n): n is GraphNode => n !== undefined && n.id !== node.id && placed.has(n.id));

  // Deepest first, so that a new compound state is placed with the size of its new children.
  const order = [...unplaced].sort((a, b) => b.data.depth - a.data.depth);
  for (const node of order) {
    const own = size(node);
    const siblings = (children.get(node.parentId) ?? []).filter((s) => s.id !== node.id && placed.has(s.id)).map(boxOf);
    const free = (box: Box) => siblings.every((s) => !overlaps(box, s));
    const from = neighbours(node, 'in')[0];
    const to = from ? undefined : neighbours(node, 'out')[0];
    const right = Math.max(0, ...siblings.map((s) => s.x + s.width + GAP_X));
    const top = node.parentId === undefined ? 0 : GROUP_PADDING * 2;
    let spot: Box = { x: right, y: Math.min(top, ...siblings.map((s) => s.y)), ...own };
    if (from || to) {
      const anchor = boxOf((from ?? to)!);
      const y = from ? anchor.y + anchor.height + GAP_Y : Math.max(top, anchor.y - own.height - GAP_Y);
      for (let i = 0; i < TRIES; i++) {
        // Right of the anchor first, then left, further out each time.
        const step = Math.ceil(i / 2) * (own.width + GAP_X) * (i % 2 === 0 ? 1 : -1);
        const candidate = { x: Math.max(node.parentId === undefined ? -Infinity : GROUP_PADDING, anchor.x + step), y, ...own };
        if (free(candidate)) {
          spot = candidate;
          break;
        }
      }
    }
    layout[node.data.layoutKey] = { x: Math.round(spot.x), y: Math.round(spot.y) };
    placed.add(node.id);
    for (let p = node.parentId; p !== undefined; p = byId.get(p)?.parentId) sizes.delete(p);
  }

  // A parent with a saved size grows to hold what was placed in it (innermost first, so that growth carries upward).
  const parents = [...new Set(unplaced.map((n) => n.parentId))].filter((id): id is string => id !== undefined);
  const chain = new Set<string>();
  for (const id of parents) for (let p = byId.get(id); p; p = p.parentId ? byId.get(p.parentId) : undefined) chain.add(p.id);
  for (const parent of [...chain].map((id) => byId.get(id)!).sort((a, b) => b.data.depth - a.data.depth)) {
    const saved = layout[parent.data.layoutKey];
    if (saved?.width === undefined || saved.height === undefined) continue;
    const inner = (children.get(parent.id) ?? []).map(boxOf);
    const width = Math.max(saved.width, ...inner.map((b) => b.x + b.width + GROUP_PADDING));
    const height = Math.max(saved.height, ...inner.map((b) => b.y + b.height + GROUP_PADDING));
    if (width !== saved.width || height !== saved.height) layout[parent.data.layoutKey] = { ...saved, width, height };
  }
  return { ...spec, layout };
}
