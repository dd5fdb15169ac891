import type { FlowSpec, Position, StateSpec, TransitionObject, TransitionSpec } from '@flowing/spec';
import type { GraphEdge, SpecGraph, StateSkeleton, TransitionSlot } from './types.ts';

/**
 * Rebuilds the spec from its graph: the inverse of `specToGraph`. Positions come from the nodes' saved layout.
 * @example const spec = graphToSpec(specToGraph(original)) // deep-equals original
 */
export function graphToSpec(graph: SpecGraph): FlowSpec {
  const edgesBySite = new Map<string, GraphEdge[]>();
  for (const edge of graph.edges) {
    const list = edgesBySite.get(edge.data.sitePointer) ?? [];
    list.push(edge);
    edgesBySite.set(edge.data.sitePointer, list);
  }
  const states: Record<string, StateSpec> = {};
  const built = new Map<string, StateSpec>();
  for (const node of graph.nodes) {
    const state = fillSkeleton(node.data.skeleton, node.id, edgesBySite);
    built.set(node.id, state);
    const parent = node.parentId === undefined ? undefined : built.get(node.parentId);
    const siblings = parent ? (parent.states ??= {}) : states;
    siblings[node.data.name] = state;
  }
  const spec = { ...graph.meta, states } as FlowSpec & Record<string, unknown>;
  const positions = new Map<string, Position>();
  for (const node of graph.nodes) if (node.data.layout) positions.set(node.data.layoutKey, node.data.layout);
  if (graph.layoutOrder !== undefined || positions.size > 0) {
    const layout: Record<string, Position> = {};
    for (const key of graph.layoutOrder ?? []) {
      const value = positions.get(key) ?? graph.orphanLayout[key];
      if (value) layout[key] = value;
    }
    for (const [key, value] of positions) if (!(key in layout)) layout[key] = value;
    spec.layout = layout;
  }
  return spec;
}

function isSlot(value: unknown): value is TransitionSlot {
  return !!value && typeof value === 'object' && '$slot' in value;
}

function fillSkeleton(skeleton: StateSkeleton, pointer: string, edgesBySite: Map<string, GraphEdge[]>): StateSpec {
  const fill = (value: unknown, sitePointer: string): unknown => {
    if (isSlot(value)) return rebuild(value, edgesBySite.get(sitePointer) ?? []);
    return value;
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(skeleton)) {
    if (key === 'states') out[key] = {};
    else if ((key === 'on' || key === 'after') && value && typeof value === 'object' && !isSlot(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, `${pointer}/${key}/${escapePointerSegment(k)}`)]));
    } else if (key === 'invoke' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, k === 'onDone' || k === 'onError' ? fill(v, `${pointer}/invoke/${k}`) : v]),
      );
    } else out[key] = fill(value, `${pointer}/${key}`);
  }
  return out as StateSpec;
}

function rebuild(slot: TransitionSlot, edges: GraphEdge[]): TransitionSpec {
  const list: TransitionObject[] = [...edges].sort((a, b) => a.data.index - b.data.index).map((e) => e.data.transition);
  if (slot.$slot === 'string') return list[0]?.target ?? '';
  if (slot.$slot === 'object') return list[0] ?? {};
  return list;
}

function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
