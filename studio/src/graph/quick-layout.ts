import type { FlowSpec, Position } from '@flowing/spec';
import { GROUP_HEADER, GROUP_PADDING, NODE_WIDTH } from './sizes.ts';
import { nodesByParent, specToGraph } from './spec-to-graph.ts';
import type { GraphNode, SpecGraph } from './types.ts';

/** Space between states in a row and between rows (close to the elkjs layout's spacing, so the view barely jumps). */
const GAP_X = 48;
const GAP_Y = 56;
/** Margin around the top-level states, and above a compound state's children (under its header), as elkjs leaves. */
const ROOT_PADDING = 24;
const GROUP_TOP = GROUP_HEADER + 10;
/** A rank with more states than this is wrapped onto several rows, so that many sources do not make one wide row. */
const ROW_MAX = 8;

/**
 * A quick layered placement of every state, computed in a few milliseconds: at each level, states in rows by their
 * distance (BFS rank) from the level's initial state along transitions (transitions between nested states count for
 * the siblings that hold them), states no transition reaches in the rows below; compound states sized around their
 * children; parallel regions side by side. States never overlap, and children lie inside their parent. It is what a
 * large machine without saved places is drawn at while elkjs lays it out properly in the worker.
 * @example const layout = quickLayout(spec)
 */
export function quickLayout(spec: FlowSpec, graph: SpecGraph = specToGraph(spec)): Record<string, Position> {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const children = nodesByParent(graph.nodes);

  // Each transition joins the two siblings that hold its ends, below the deepest state holding both.
  const chainOf = (node: GraphNode): GraphNode[] => {
    const chain: GraphNode[] = [];
    for (let at: GraphNode | undefined = node; at; at = at.parentId === undefined ? undefined : byId.get(at.parentId)) chain.push(at);
    return chain.reverse();
  };
  const chains = new Map<string, GraphNode[]>();
  const chain = (node: GraphNode) => {
    let found = chains.get(node.id);
    if (!found) chains.set(node.id, (found = chainOf(node)));
    return found;
  };
  const next = new Map<string, string[]>();
  for (const edge of graph.edges) {
    const source = byId.get(edge.source);
    const target = byId.get(edge.target);
    if (!source || !target || edge.data.dangling || source === target) continue;
    const a = chain(source);
    const b = chain(target);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    if (i >= a.length || i >= b.length) continue;
    const list = next.get(a[i]!.id);
    if (list) list.push(b[i]!.id);
    else next.set(a[i]!.id, [b[i]!.id]);
  }

  const layout: Record<string, Position> = {};
  const sizes = new Map<string, { width: number; height: number }>();
  const sizeOf = (node: GraphNode) => sizes.get(node.id) ?? { width: node.width, height: node.height };

  // Deepest levels first: a compound state is placed with the size of its children as placed.
  const parents = [...children.keys()].sort((a, b) => depth(b) - depth(a));
  function depth(id: string | undefined): number {
    return id === undefined ? -1 : byId.get(id)!.data.depth;
  }
  for (const parentId of parents) {
    const level = children.get(parentId)!;
    const parent = parentId === undefined ? undefined : byId.get(parentId)!;
    const initial = parent === undefined ? spec.initial : (parent.data.skeleton.initial as string | undefined);
    const rows = rowsOf(level, initial, next);
    const origin = parent === undefined ? { x: ROOT_PADDING, y: ROOT_PADDING } : { x: GROUP_PADDING, y: GROUP_TOP };
    const widths = rows.map((row) => row.reduce((w, n) => w + sizeOf(n).width, 0) + GAP_X * (row.length - 1));
    const contentWidth = Math.max(0, ...widths);
    let y = origin.y;
    rows.forEach((row, r) => {
      // Rows are centred under the widest one, as a layered layout reads.
      let x = origin.x + Math.round((contentWidth - widths[r]!) / 2);
      let height = 0;
      for (const node of row) {
        const size = sizeOf(node);
        layout[node.data.layoutKey] = { x, y };
        x += size.width + GAP_X;
        height = Math.max(height, size.height);
      }
      y += height + GAP_Y;
    });
    if (parent) {
      const width = Math.max(NODE_WIDTH, contentWidth + 2 * GROUP_PADDING);
      const height = Math.max(GROUP_TOP + GROUP_PADDING, y - GAP_Y + GROUP_PADDING);
      sizes.set(parent.id, { width, height });
    }
  }
  // Compound states carry their size, as an elkjs layout saves it; keys in document order.
  const ordered: Record<string, Position> = {};
  for (const node of graph.nodes) {
    const size = sizes.get(node.id);
    ordered[node.data.layoutKey] = size ? { ...layout[node.data.layoutKey]!, ...size } : layout[node.data.layoutKey]!;
  }
  return ordered;
}

/** The siblings of one level in rows: BFS ranks from the initial state, unreached states ranked after the reached ones. */
function rowsOf(level: GraphNode[], initial: string | undefined, next: Map<string, string[]>): GraphNode[][] {
  const inLevel = new Map(level.map((n) => [n.id, n]));
  const rank = new Map<string, number>();
  const order: GraphNode[] = [];
  const visit = (seeds: GraphNode[], base: number) => {
    const queue = seeds.filter((s) => !rank.has(s.id));
    for (const seed of queue) rank.set(seed.id, base);
    for (let i = 0; i < queue.length; i++) {
      const node = queue[i]!;
      order.push(node);
      for (const id of next.get(node.id) ?? []) {
        const target = inLevel.get(id);
        if (!target || rank.has(id)) continue;
        rank.set(id, rank.get(node.id)! + 1);
        queue.push(target);
      }
    }
  };
  const first = level.find((n) => n.data.name === initial);
  // Parallel regions (and a level without an initial state) start side by side in the first row.
  visit(first ? [first] : level, 0);
  const unreached = level.filter((n) => !rank.has(n.id));
  if (unreached.length > 0) {
    const base = Math.max(...rank.values()) + 1;
    // States no transition reaches from the ones placed so far start the next rows (in document order).
    const targets = new Set(unreached.flatMap((n) => next.get(n.id) ?? []));
    const sources = unreached.filter((n) => !targets.has(n.id));
    visit(sources.length > 0 ? sources : unreached.slice(0, 1), base);
    for (const node of level) if (!rank.has(node.id)) visit([node], base);
  }
  const byRank: GraphNode[][] = [];
  for (const node of order) (byRank[rank.get(node.id)!] ??= []).push(node);
  const rows: GraphNode[][] = [];
  for (const row of byRank) {
    if (!row) continue;
    for (let i = 0; i < row.length; i += ROW_MAX) rows.push(row.slice(i, i + ROW_MAX));
  }
  return rows;
}
