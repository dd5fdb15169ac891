import type { FlowSpec, Position, StateSpec, TransitionObject, TransitionSpec } from '@flowing/spec';
import { stateType } from '@flowing/spec';
import { branchOrder, labelLines, transitionLabel } from './labels.ts';
import { toPointer } from './pointer.ts';
import { GROUP_HEADER, GROUP_PADDING, leafSize } from './sizes.ts';
import type { GraphEdge, GraphNode, SpecGraph, StateSkeleton, TransitionForm, TransitionKind, TransitionSlot } from './types.ts';

interface PendingEdge {
  source: GraphNode;
  kind: TransitionKind;
  key: string | undefined;
  form: TransitionForm;
  index: number;
  site: string[];
  transition: TransitionObject;
  list: TransitionObject[];
}

/**
 * Turns a spec into nodes (one per state, compound states as parents of their children) and edges (one per transition).
 * Nothing is dropped: `graphToSpec` rebuilds the same spec.
 * @example const { nodes, edges } = specToGraph(spec)
 */
export function specToGraph(spec: FlowSpec): SpecGraph {
  const { states, layout, ...rest } = spec as FlowSpec & Record<string, unknown>;
  const nodes: GraphNode[] = [];
  const pending: PendingEdge[] = [];
  const layoutEntries = (layout ?? {}) as Record<string, Position>;
  const usedLayout = new Set<string>();

  const visit = (children: Record<string, StateSpec>, parent: GraphNode | undefined, parentState: StateSpec | undefined) => {
    for (const [name, state] of Object.entries(children ?? {})) {
      const path = parent ? [...parent.data.path, name] : [name];
      const segments = path.flatMap((n) => ['states', n]);
      const pointer = toPointer(segments);
      const layoutKey = path.join('.');
      const saved = Object.hasOwn(layoutEntries, layoutKey) ? layoutEntries[layoutKey] : undefined;
      if (saved) usedLayout.add(layoutKey);
      const skeletonSites: Array<{ at: string[]; value: TransitionSpec; kind: TransitionKind; key: string | undefined }> = [];
      const skeleton = skeletonOf(state, skeletonSites);
      const type = stateType(state);
      const size = leafSize(state);
      const node: GraphNode = {
        id: pointer,
        type: 'state',
        position: saved ? { x: saved.x, y: saved.y } : { x: 0, y: 0 },
        width: saved?.width ?? size.width,
        height: saved?.height ?? size.height,
        data: {
          name,
          path,
          layoutKey,
          pointer,
          type,
          skeleton,
          layout: saved,
          isInitial: parent ? parentState?.initial === name : spec.initial === name,
          isRegion: parentState !== undefined && stateType(parentState) === 'parallel',
          depth: path.length - 1,
        },
      };
      if (parent) node.parentId = parent.id;
      nodes.push(node);
      for (const site of skeletonSites) {
        const form: TransitionForm = typeof site.value === 'string' ? 'string' : Array.isArray(site.value) ? 'array' : 'object';
        const list: TransitionObject[] =
          typeof site.value === 'string' ? [{ target: site.value }] : Array.isArray(site.value) ? site.value : [site.value];
        list.forEach((transition, index) => {
          pending.push({ source: node, kind: site.kind, key: site.key, form, index, site: [...segments, ...site.at], transition, list });
        });
      }
      if (state.states && typeof state.states === 'object') visit(state.states, node, state);
    }
  };
  visit(states, undefined, undefined);
  sizeGroups(nodes);

  const byName = new Map<string, GraphNode>();
  for (const node of nodes) if (!byName.has(node.data.name)) byName.set(node.data.name, node);
  const edges: GraphEdge[] = pending.map((p) => {
    const sitePointer = toPointer(p.site);
    const pointer = p.form === 'array' ? toPointer([...p.site, p.index]) : sitePointer;
    const targetNode = p.transition.target === undefined ? p.source : byName.get(p.transition.target);
    const branch = branchOrder(p.list, p.index);
    const { lines, full } = labelLines(p.kind, p.key, p.transition, branch);
    const edge: GraphEdge = {
      id: pointer,
      type: 'transition',
      source: p.source.id,
      target: targetNode?.id ?? '',
      data: {
        kind: p.kind,
        key: p.key,
        form: p.form,
        index: p.index,
        sitePointer,
        pointer,
        transition: p.transition,
        sourceName: p.source.data.name,
        label: transitionLabel(p.kind, p.key, p.transition),
        lines,
        fullLabel: full,
        branch,
        internal: p.transition.target === undefined,
        dangling: targetNode === undefined,
        lane: 0,
        lanes: 1,
      },
    };
    if (p.kind === 'onDone') edge.sourceHandle = 'done';
    if (p.kind === 'onError') edge.sourceHandle = 'error';
    return edge;
  });
  assignLanes(edges);

  const orphanLayout: Record<string, Position> = {};
  for (const [key, value] of Object.entries(layoutEntries)) if (!usedLayout.has(key)) orphanLayout[key] = value;
  return {
    meta: rest as SpecGraph['meta'],
    layoutOrder: layout === undefined ? undefined : Object.keys(layoutEntries),
    orphanLayout,
    nodes,
    edges,
  };
}

const SLOT_KEYS_STATE = ['always', 'onDone'] as const;

function slot(value: TransitionSpec): TransitionSlot {
  if (typeof value === 'string') return { $slot: 'string', count: 1 };
  if (Array.isArray(value)) return { $slot: 'array', count: value.length };
  return { $slot: 'object', count: 1 };
}

/** Copies a state without children, replacing each transition value with a slot and collecting the sites. */
function skeletonOf(
  state: StateSpec,
  sites: Array<{ at: string[]; value: TransitionSpec; kind: TransitionKind; key: string | undefined }>,
): StateSkeleton {
  const skeleton: StateSkeleton = {};
  for (const [key, value] of Object.entries(state)) {
    if (key === 'states') skeleton[key] = {};
    else if ((key === 'on' || key === 'after') && value && typeof value === 'object') {
      const map: Record<string, TransitionSlot> = {};
      for (const [k, v] of Object.entries(value as Record<string, TransitionSpec>)) {
        map[k] = slot(v);
        sites.push({ at: [key, k], value: v, kind: key, key: k });
      }
      skeleton[key] = map;
    } else if ((SLOT_KEYS_STATE as readonly string[]).includes(key) && value !== undefined) {
      skeleton[key] = slot(value as TransitionSpec);
      sites.push({ at: [key], value: value as TransitionSpec, kind: key === 'always' ? 'always' : 'done', key: undefined });
    } else if (key === 'invoke' && value && typeof value === 'object') {
      const invoke: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if ((k === 'onDone' || k === 'onError') && v !== undefined) {
          invoke[k] = slot(v as TransitionSpec);
          sites.push({ at: ['invoke', k], value: v as TransitionSpec, kind: k, key: undefined });
        } else invoke[k] = v;
      }
      skeleton[key] = invoke;
    } else skeleton[key] = value;
  }
  return skeleton;
}

/** Gives compound states without a saved size one that holds their children. */
function sizeGroups(nodes: GraphNode[]) {
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!;
    if (node.data.type !== 'compound' && node.data.type !== 'parallel') continue;
    if (node.data.layout?.width !== undefined && node.data.layout.height !== undefined) continue;
    const children = nodes.filter((n) => n.parentId === node.id);
    if (children.length === 0) continue;
    const right = Math.max(...children.map((c) => c.position.x + c.width));
    const bottom = Math.max(...children.map((c) => c.position.y + c.height));
    node.width = Math.max(node.width, right + GROUP_PADDING);
    node.height = Math.max(node.height, bottom + GROUP_PADDING, GROUP_HEADER + GROUP_PADDING);
  }
}

/** Numbers the edges that join the same two nodes, so that they can be drawn apart. */
function assignLanes(edges: GraphEdge[]) {
  const groups = new Map<string, GraphEdge[]>();
  for (const edge of edges) {
    const key = [edge.source, edge.target].sort().join('|');
    const list = groups.get(key) ?? [];
    list.push(edge);
    groups.set(key, list);
  }
  for (const list of groups.values())
    list.forEach((edge, i) => {
      edge.data.lane = i;
      edge.data.lanes = list.length;
    });
}

/** The graph's nodes grouped by the compound state holding them (`undefined`: the machine's top level), in order. */
export function nodesByParent(nodes: readonly GraphNode[]): Map<string | undefined, GraphNode[]> {
  const children = new Map<string | undefined, GraphNode[]>();
  for (const node of nodes) {
    const list = children.get(node.parentId);
    if (list) list.push(node);
    else children.set(node.parentId, [node]);
  }
  return children;
}
