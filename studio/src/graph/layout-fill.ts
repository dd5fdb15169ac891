import type { FlowSpec, Position } from '@flowing/spec';
import { specToGraph } from './spec-to-graph.ts';

/** Layout keys of states that have no saved position. */
export function statesWithoutLayout(spec: FlowSpec): string[] {
  return specToGraph(spec)
    .nodes.filter((n) => !n.data.layout)
    .map((n) => n.data.layoutKey);
}

/**
 * Gives each state without a saved position one to the right of its positioned siblings (used when a few states were
 * added by hand; a machine with no layout at all gets the elkjs layout instead).
 */
export function fillMissingLayout(spec: FlowSpec): FlowSpec {
  const graph = specToGraph(spec);
  const layout: Record<string, Position> = { ...(spec.layout ?? {}) };
  const nextX = new Map<string, number>();
  for (const node of graph.nodes) {
    const siblings = graph.nodes.filter((n) => n.parentId === node.parentId && n.data.layout);
    if (!nextX.has(node.parentId ?? '')) nextX.set(node.parentId ?? '', Math.max(0, ...siblings.map((s) => s.position.x + s.width + 60)));
  }
  for (const node of graph.nodes) {
    if (node.data.layout) continue;
    const key = node.parentId ?? '';
    const x = nextX.get(key)!;
    layout[node.data.layoutKey] = { x, y: node.parentId ? 48 : 0 };
    nextX.set(key, x + node.width + 60);
  }
  return { ...spec, layout };
}
