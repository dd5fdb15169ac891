import type { FlowSpec } from '@flowing/spec';
import { specToGraph, type SpecGraph } from '../graph/index.ts';

const graphs = new WeakMap<FlowSpec, SpecGraph>();

/**
 * The graph of a spec, computed once per spec object: the canvas, the side panel and the problem list all read it
 * after each edit (specs are never changed in place, so the object identifies the version).
 */
export function graphOf(spec: FlowSpec): SpecGraph {
  let graph = graphs.get(spec);
  if (!graph) {
    graph = specToGraph(spec);
    graphs.set(spec, graph);
  }
  return graph;
}
