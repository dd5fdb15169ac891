import type { FlowSpec, Position } from '@flowing/spec';
import { GROUP_HEADER, GROUP_PADDING, leafSize } from './sizes.ts';
import { specToGraph } from './spec-to-graph.ts';

/** The part of an elkjs instance the layout needs (so that tests and the browser can pass their own). */
export interface ElkLayouter {
  layout(graph: ElkGraphNode): Promise<ElkGraphNode>;
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
  edges?: Array<{ id: string; sources: string[]; targets: string[]; labels?: Array<{ text: string; width: number; height: number }> }>;
}

const ROOT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.spacing.nodeNode': '40',
  'elk.layered.spacing.nodeNodeBetweenLayers': '90',
  'elk.spacing.edgeLabel': '4',
  'elk.layered.spacing.edgeNodeBetweenLayers': '24',
  'elk.edgeLabels.inline': 'false',
  'elk.padding': '[top=20,left=20,bottom=20,right=20]',
};

const GROUP_OPTIONS: Record<string, string> = {
  'elk.padding': `[top=${GROUP_HEADER + 8},left=${GROUP_PADDING},bottom=${GROUP_PADDING},right=${GROUP_PADDING}]`,
};

/**
 * Lays a machine out left to right with elkjs (layered), compound states as groups around their children.
 * Returns a `layout` map: positions relative to the parent state, and sizes for compound states.
 * @example const layout = await computeLayout(spec, new ELK())
 */
export async function computeLayout(spec: FlowSpec, elk: ElkLayouter): Promise<Record<string, Position>> {
  const graph = specToGraph(spec);
  const elkNodes = new Map<string, ElkGraphNode>();
  const root: ElkGraphNode = { id: '__root', layoutOptions: ROOT_OPTIONS, children: [], edges: [] };
  for (const node of graph.nodes) {
    const isGroup = graph.nodes.some((n) => n.parentId === node.id);
    const size = leafSize(node.data.skeleton);
    const elkNode: ElkGraphNode = isGroup
      ? { id: node.id, layoutOptions: GROUP_OPTIONS, children: [] }
      : { id: node.id, width: size.width, height: size.height };
    elkNodes.set(node.id, elkNode);
    const parent = node.parentId === undefined ? root : elkNodes.get(node.parentId)!;
    parent.children!.push(elkNode);
  }
  for (const edge of graph.edges) {
    if (edge.data.dangling || edge.source === edge.target) continue;
    root.edges!.push({
      id: edge.id,
      sources: [edge.source],
      targets: [edge.target],
      labels: [{ text: edge.data.label, width: Math.min(220, 7 * edge.data.label.length + 12), height: 18 }],
    });
  }
  const result = await elk.layout(root);
  const layout: Record<string, Position> = {};
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const read = (elkNode: ElkGraphNode) => {
    for (const child of elkNode.children ?? []) {
      const node = byId.get(child.id);
      if (!node) continue;
      const position: Position = { x: Math.round(child.x ?? 0), y: Math.round(child.y ?? 0) };
      if (child.children && child.children.length > 0) {
        position.width = Math.round(child.width ?? 0);
        position.height = Math.round(child.height ?? 0);
      }
      layout[node.data.layoutKey] = position;
      read(child);
    }
  };
  read(result);
  return layout;
}
