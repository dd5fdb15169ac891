import type { SpecProblem } from '@flowing/spec';
import { isWithin } from './pointer.ts';
import type { GraphEdge, GraphNode } from './types.ts';

/** The graph element a problem belongs to: a transition, a state, or the machine itself. */
export type ProblemTarget = { kind: 'transition'; id: string } | { kind: 'state'; id: string } | { kind: 'machine' };

/**
 * Finds the element a problem's JSON pointer names: the deepest transition or state whose pointer contains it.
 * @example elementForProblem(graph, '/states/idle/on/GO/guard') // { kind: 'transition', id: '/states/idle/on/GO' }
 */
export function elementForProblem(graph: { nodes: readonly GraphNode[]; edges: readonly GraphEdge[] }, path: string): ProblemTarget {
  let best: ProblemTarget = { kind: 'machine' };
  let bestLength = -1;
  for (const edge of graph.edges) {
    const at = isWithin(path, edge.id) ? edge.id : path === edge.data.sitePointer ? edge.data.sitePointer : undefined;
    if (at !== undefined && at.length > bestLength) {
      best = { kind: 'transition', id: edge.id };
      bestLength = at.length;
    }
  }
  for (const node of graph.nodes) {
    if (isWithin(path, node.id) && node.id.length > bestLength) {
      best = { kind: 'state', id: node.id };
      bestLength = node.id.length;
    }
  }
  return best;
}

/** Groups problems by the element they belong to (key: node or edge id; `''` for the machine). */
export function problemsByElement(
  graph: { nodes: readonly GraphNode[]; edges: readonly GraphEdge[] },
  problems: readonly SpecProblem[],
): Map<string, SpecProblem[]> {
  const out = new Map<string, SpecProblem[]>();
  for (const problem of problems) {
    const target = elementForProblem(graph, problem.path);
    const key = target.kind === 'machine' ? '' : target.id;
    const list = out.get(key) ?? [];
    list.push(problem);
    out.set(key, list);
  }
  return out;
}
