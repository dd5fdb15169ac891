import { formatSpec, type FlowSpec, type Position } from '@flowing/spec';
import { estimateLabel, type Box, type EdgeGeometry, type LabelMeasure, type LayoutGeometry, type Point } from './geometry.ts';
import { attachLabelsToEdges } from './label-attach.ts';
import { GROUP_HEADER, GROUP_PADDING, leafSize } from './sizes.ts';
import { specToGraph } from './spec-to-graph.ts';
import type { GraphEdge, GraphNode } from './types.ts';

/** The part of an elkjs instance the layout needs (so that tests and the browser can pass their own). */
export interface ElkLayouter {
  layout(graph: ElkGraphNode): Promise<ElkGraphNode>;
}

/** An elkjs port (the subset used here). */
export interface ElkPort {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  layoutOptions?: Record<string, string>;
}

/** An elkjs edge with its routed sections and labels (the subset used here). */
export interface ElkGraphEdge {
  id: string;
  sources: string[];
  targets: string[];
  labels?: Array<{ text: string; width: number; height: number; x?: number; y?: number }>;
  sections?: Array<{ startPoint: Point; endPoint: Point; bendPoints?: Point[] }>;
}

/** An elkjs graph node (the subset used here). */
export interface ElkGraphNode {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  layoutOptions?: Record<string, string>;
  children?: ElkGraphNode[];
  ports?: ElkPort[];
  edges?: ElkGraphEdge[];
}

const ROOT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.edgeRouting': 'ORTHOGONAL',
  // Labels become part of the layout (dummy nodes between layers), so they never sit on states or on each other.
  'elk.edgeLabels.placement': 'CENTER',
  'elk.edgeLabels.inline': 'false',
  'elk.spacing.nodeNode': '36',
  'elk.spacing.edgeLabel': '4',
  'elk.spacing.edgeNode': '18',
  'elk.spacing.edgeEdge': '12',
  'elk.spacing.labelNode': '8',
  'elk.spacing.labelLabel': '6',
  'elk.layered.spacing.nodeNodeBetweenLayers': '44',
  'elk.layered.spacing.edgeNodeBetweenLayers': '18',
  'elk.layered.spacing.edgeEdgeBetweenLayers': '10',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.cycleBreaking.strategy': 'MODEL_ORDER',
  // Edge points and labels come back in root coordinates; state positions stay relative to their parent.
  'elk.json.edgeCoords': 'ROOT',
  'elk.padding': '[top=24,left=24,bottom=24,right=24]',
};

// Compound states leave their port sides free: with fixed sides, elkjs 0.12 routes some edges that leave a compound
// state with a diagonal jump between the inner and the outer part.
const GROUP_OPTIONS: Record<string, string> = {
  'elk.padding': `[top=${GROUP_HEADER + 10},left=${GROUP_PADDING},bottom=${GROUP_PADDING},right=${GROUP_PADDING}]`,
};

const LEAF_OPTIONS: Record<string, string> = { 'elk.portConstraints': 'FIXED_SIDE' };

const port = (id: string, side: 'NORTH' | 'SOUTH'): ElkPort => ({ id, width: 8, height: 8, layoutOptions: { 'elk.port.side': side } });

/** Children in document order, except that the initial state comes first (the layout reads top-down from it). */
function ordered(nodes: GraphNode[], initialOf: (parentId: string | undefined) => string | undefined): GraphNode[] {
  return [...nodes].sort((a, b) => {
    if (a.parentId !== b.parentId) return 0;
    const initial = initialOf(a.parentId);
    return (a.data.name === initial ? -1 : 0) - (b.data.name === initial ? -1 : 0);
  });
}

/** Builds the elkjs graph of a machine: states (compound ones holding their children), ports per side, labelled edges. */
export function toElkGraph(
  spec: FlowSpec,
  measure: LabelMeasure = estimateLabel,
): { root: ElkGraphNode; nodes: GraphNode[]; edges: GraphEdge[] } {
  // In the key order a saved file has: the order of a state's transitions decides the order of its ports and so
  // the layout, and a layout must come out the same before and after a Save (the routes of a saved layout fit it).
  const graph = specToGraph(JSON.parse(formatSpec(spec)) as FlowSpec);
  const initialOf = (parentId: string | undefined) => {
    if (parentId === undefined) return spec.initial;
    const parent = graph.nodes.find((n) => n.id === parentId);
    return parent?.data.skeleton.initial as string | undefined;
  };
  const elkNodes = new Map<string, ElkGraphNode>();
  const root: ElkGraphNode = { id: '__root', layoutOptions: ROOT_OPTIONS, children: [], edges: [] };
  const parents = new Set(graph.nodes.map((n) => n.parentId).filter((id): id is string => id !== undefined));
  for (const node of ordered(graph.nodes, initialOf)) {
    const size = leafSize(node.data.skeleton);
    // The initial state opens its level: the layout reads top-down from it (edges back into it are routed as back edges).
    const first: Record<string, string> =
      node.data.isInitial && !node.data.isRegion ? { 'elk.layered.layering.layerConstraint': 'FIRST' } : {};
    const elkNode: ElkGraphNode = parents.has(node.id)
      ? { id: node.id, layoutOptions: { ...GROUP_OPTIONS, ...first }, children: [], ports: [] }
      : { id: node.id, width: size.width, height: size.height, layoutOptions: { ...LEAF_OPTIONS, ...first }, ports: [] };
    elkNodes.set(node.id, elkNode);
    const parent = node.parentId === undefined ? root : elkNodes.get(node.parentId)!;
    parent.children!.push(elkNode);
  }
  const edges = graph.edges.filter((e) => !e.data.dangling);
  for (const edge of edges) {
    const source = elkNodes.get(edge.source)!;
    const target = elkNodes.get(edge.target)!;
    // Each transition gets its own port, so edges spread along a state's border; branches of an invoke share its
    // done or error port, the point they visibly leave from.
    let sourcePort = `${edge.id}#out`;
    if (edge.sourceHandle) {
      sourcePort = `${edge.source}#${edge.sourceHandle}`;
      if (!source.ports!.some((p) => p.id === sourcePort)) source.ports!.push(port(sourcePort, 'SOUTH'));
    } else source.ports!.push(port(sourcePort, 'SOUTH'));
    const targetPort = `${edge.id}#in`;
    target.ports!.push(port(targetPort, 'NORTH'));
    const size = measure(edge.data.lines);
    root.edges!.push({
      id: edge.id,
      sources: [sourcePort],
      targets: [targetPort],
      labels: [{ text: edge.data.lines.join('\n'), width: size.width, height: size.height }],
    });
  }
  return { root, nodes: graph.nodes, edges };
}

/**
 * Lays a machine out top to bottom with elkjs (layered): compound states around their children, parallel regions side
 * by side, orthogonal routes with a port per transition, and a place for every edge label.
 * @example const geometry = await computeGeometry(spec, new ELK())
 */
export async function computeGeometry(spec: FlowSpec, elk: ElkLayouter, measure: LabelMeasure = estimateLabel): Promise<LayoutGeometry> {
  const { root, nodes, edges } = toElkGraph(spec, measure);
  const result = await elk.layout(root);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const layout: Record<string, Position> = {};
  const boxes: Record<string, Box> = {};
  const ports: LayoutGeometry['ports'] = {};
  const read = (elkNode: ElkGraphNode, origin: Point) => {
    for (const child of elkNode.children ?? []) {
      const node = byId.get(child.id);
      if (!node) continue;
      const position: Position = { x: Math.round(child.x ?? 0), y: Math.round(child.y ?? 0) };
      if (child.children && child.children.length > 0) {
        position.width = Math.round(child.width ?? 0);
        position.height = Math.round(child.height ?? 0);
      }
      layout[node.data.layoutKey] = position;
      const box = {
        x: origin.x + position.x,
        y: origin.y + position.y,
        width: position.width ?? child.width ?? 0,
        height: position.height ?? child.height ?? 0,
      };
      boxes[node.id] = box;
      for (const p of child.ports ?? []) {
        const which = p.id.endsWith('#done') ? 'done' : p.id.endsWith('#error') ? 'error' : undefined;
        if (which) (ports[node.id] ??= {})[which] = { x: (p.x ?? 0) + (p.width ?? 0) / 2, y: (p.y ?? 0) + (p.height ?? 0) / 2 };
      }
      read(child, box);
    }
  };
  read(result, { x: 0, y: 0 });
  const routed: Record<string, EdgeGeometry> = {};
  const text = new Map(edges.map((e) => [e.id, e.data.lines.join('\n')]));
  for (const edge of result.edges ?? []) {
    const section = edge.sections?.[0];
    if (!section) continue;
    const label = edge.labels?.[0];
    routed[edge.id] = {
      points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((p) => ({
        x: Math.round(p.x * 10) / 10,
        y: Math.round(p.y * 10) / 10,
      })),
      label:
        label && label.x !== undefined && label.y !== undefined
          ? { x: label.x, y: label.y, width: label.width, height: label.height }
          : undefined,
      text: text.get(edge.id) ?? '',
    };
  }
  const groups = new Set(nodes.map((n) => n.parentId).filter((id) => id !== undefined));
  attachLabelsToEdges(
    routed,
    Object.entries(boxes).map(([id, box]) => (groups.has(id) ? { ...box, height: GROUP_HEADER } : box)),
  );
  return { layout, nodes: boxes, edges: routed, ports };
}

/**
 * Lays a machine out (see `computeGeometry`) and returns only its `layout` map: positions relative to the parent
 * state, and sizes for compound states.
 * @example const layout = await computeLayout(spec, new ELK())
 */
export async function computeLayout(spec: FlowSpec, elk: ElkLayouter, measure?: LabelMeasure): Promise<Record<string, Position>> {
  return (await computeGeometry(spec, elk, measure)).layout;
}
