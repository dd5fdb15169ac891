import {
  Background, Controls, MarkerType, MiniMap, ReactFlow, applyNodeChanges, useNodesInitialized, useReactFlow,
  type Connection, type NodeChange, type NodeMouseHandler, type EdgeMouseHandler, type OnNodeDrag,
} from '@xyflow/react';
import { useCallback, useEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import {
  addTransition, moveState, problemsByElement, setStateLayout, specToGraph, type GraphNode,
} from '../graph/index.ts';
import type { SpecProblem } from '@flowing/spec';
import { useAddState } from '../hooks/useAddState.ts';
import { useEditor } from '../store/editor-store.ts';
import { PromptDialog } from './PromptDialog.tsx';
import { StateNode, type StateNodeView } from './StateNode.tsx';
import { TransitionEdge, type TransitionEdgeView } from './TransitionEdge.tsx';

const nodeTypes = { state: StateNode };
const edgeTypes = { transition: TransitionEdge };

/** The graph editor canvas: states and transitions of the open machine, editable by drag, connect and double-click. */
export function Canvas() {
  const spec = useEditor((s) => s.spec);
  const problems = useEditor((s) => s.problems);
  const codegenProblems = useEditor((s) => s.codegenProblems);
  const selection = useEditor((s) => s.selection);
  const centerRequest = useEditor((s) => s.centerRequest);
  const fitRequest = useEditor((s) => s.fitRequest);
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  const flow = useReactFlow();
  const initialized = useNodesInitialized();
  const [pendingConnection, setPendingConnection] = useState<Connection | undefined>();
  const openMarkPending = useRef(false);

  const graph = useMemo(() => (spec ? specToGraph(spec) : undefined), [spec]);
  const byElement = useMemo(
    () => (graph ? problemsByElement(graph, [...problems, ...codegenProblems]) : new Map<string, SpecProblem[]>()),
    [graph, problems, codegenProblems],
  );

  const viewNodes = useMemo<StateNodeView[]>(() => (graph?.nodes ?? []).map((node) => {
    const list = byElement.get(node.id) ?? [];
    const errors = list.filter((p) => p.severity === 'error');
    return {
      id: node.id, type: 'state', position: node.position, parentId: node.parentId,
      width: node.width, height: node.height, zIndex: node.data.depth,
      selected: selection?.kind === 'state' && selection.id === node.id,
      data: { ...node.data, errors: errors.length, warnings: list.length - errors.length, firstProblem: list[0]?.message },
    };
  }), [graph, byElement, selection]);

  const [nodes, setNodes] = useState<StateNodeView[]>([]);
  useEffect(() => { setNodes(viewNodes); }, [viewNodes]);

  const edges = useMemo<TransitionEdgeView[]>(() => (graph?.edges ?? []).filter((e) => !e.data.dangling).map((edge) => {
    const list = byElement.get(edge.id) ?? [];
    const errors = list.filter((p) => p.severity === 'error');
    return {
      ...edge, selected: selection?.kind === 'transition' && selection.id === edge.id,
      markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
      data: { ...edge.data, errors: errors.length, firstProblem: list[0]?.message },
    };
  }), [graph, byElement, selection]);

  useEffect(() => { openMarkPending.current = true; }, [fitRequest]);
  useEffect(() => {
    if (!initialized || nodes.length === 0) return;
    const id = window.setTimeout(() => {
      void flow.fitView({ padding: 0.1, duration: 0 });
      if (openMarkPending.current && performance.getEntriesByName('flowing:open:start').length > 0) {
        openMarkPending.current = false;
        requestAnimationFrame(() => {
          performance.mark('flowing:open:interactive');
          performance.measure('flowing:open', 'flowing:open:start', 'flowing:open:interactive');
          document.body.dataset.canvasReady = String(Date.now());
        });
      }
    }, 0);
    return () => window.clearTimeout(id);
    // Fit only when a machine is opened or laid out again, not on every edit.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [fitRequest, initialized]);

  useEffect(() => {
    if (!selection || selection.kind === 'machine' || centerRequest === 0) return;
    const center = (() => {
      if (selection.kind === 'state') {
        const internal = flow.getInternalNode(selection.id);
        if (!internal) return undefined;
        const p = internal.internals.positionAbsolute;
        return { x: p.x + (internal.measured.width ?? 0) / 2, y: p.y + (internal.measured.height ?? 0) / 2 };
      }
      const edge = edges.find((e) => e.id === selection.id);
      const a = edge && flow.getInternalNode(edge.source);
      const b = edge && flow.getInternalNode(edge.target);
      if (!a || !b) return undefined;
      return {
        x: (a.internals.positionAbsolute.x + b.internals.positionAbsolute.x) / 2 + 100,
        y: (a.internals.positionAbsolute.y + b.internals.positionAbsolute.y) / 2 + 30,
      };
    })();
    if (center) void flow.setCenter(center.x, center.y, { zoom: Math.max(flow.getZoom(), 1), duration: 250 });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [centerRequest]);

  const onNodesChange = useCallback((changes: NodeChange<StateNodeView>[]) => {
    setNodes((current) => applyNodeChanges(changes.filter((c) => c.type === 'position' || c.type === 'dimensions'), current));
  }, []);

  const absolute = (id: string) => flow.getInternalNode(id)?.internals.positionAbsolute ?? { x: 0, y: 0 };

  const onNodeDragStop: OnNodeDrag<StateNodeView> = (_event, node) => {
    if (!graph) return;
    const abs = absolute(node.id);
    const w = node.width ?? 0;
    const h = node.height ?? 0;
    const cx = abs.x + w / 2;
    const cy = abs.y + h / 2;
    // The deepest compound or parallel state under the dropped node's centre becomes its parent.
    let parent: GraphNode | undefined;
    for (const candidate of graph.nodes) {
      if (candidate.id === node.id || candidate.id.startsWith(node.id + '/')) continue;
      if (candidate.data.type !== 'compound' && candidate.data.type !== 'parallel') continue;
      const p = absolute(candidate.id);
      if (cx >= p.x && cx <= p.x + candidate.width && cy >= p.y && cy <= p.y + candidate.height) {
        if (!parent || candidate.data.depth > parent.data.depth) parent = candidate;
      }
    }
    const data = node.data;
    if ((parent?.id ?? undefined) !== node.parentId) {
      const origin = parent ? absolute(parent.id) : { x: 0, y: 0 };
      apply((s) => moveState(s, data.pointer, parent?.id, { x: abs.x - origin.x, y: abs.y - origin.y }), { select: { kind: 'state', id: parent ? `${parent.id}/states/${data.name}` : `/states/${data.name}` } });
      return;
    }
    apply((s) => growParents(setStateLayout(s, data.layoutKey, { ...(s.layout?.[data.layoutKey] ?? {}), x: node.position.x, y: node.position.y }), graph.nodes, node.id, node.position, w, h));
  };

  const onNodeClick: NodeMouseHandler<StateNodeView> = (_e, node) => select({ kind: 'state', id: node.id });
  const onEdgeClick: EdgeMouseHandler<TransitionEdgeView> = (_e, edge) => select({ kind: 'transition', id: edge.id });

  const addStateCommand = useAddState();
  const addStateAt = (flowPoint: { x: number; y: number }, parent?: GraphNode) => {
    const origin = parent ? absolute(parent.id) : { x: 0, y: 0 };
    addStateCommand({ x: flowPoint.x - origin.x - 100, y: flowPoint.y - origin.y - 28 }, parent?.id);
  };

  const onDoubleClick = (event: MouseEvent) => {
    const target = event.target as HTMLElement;
    if (!target.classList.contains('react-flow__pane')) return;
    addStateAt(flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
  };
  const onNodeDoubleClick: NodeMouseHandler<StateNodeView> = (event, node) => {
    if (node.data.type !== 'compound' && node.data.type !== 'parallel') return;
    const parent = graph?.nodes.find((n) => n.id === node.id);
    addStateAt(flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }), parent);
  };

  if (!spec) return <div className="canvas canvas--empty">Open a machine from the list to start.</div>;
  return (
    <div className="canvas" onDoubleClick={onDoubleClick} data-testid="canvas">
      <ReactFlow<StateNodeView, TransitionEdgeView>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onNodeDragStop={onNodeDragStop}
        onNodeClick={onNodeClick}
        onEdgeClick={onEdgeClick}
        onNodeDoubleClick={onNodeDoubleClick}
        onPaneClick={() => select(null)}
        onConnect={(connection) => setPendingConnection(connection)}
        deleteKeyCode={null}
        zoomOnDoubleClick={false}
        minZoom={0.1}
        maxZoom={2}
        elevateNodesOnSelect={false}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} />
        <Controls />
        <MiniMap pannable zoomable ariaLabel="minimap" />
      </ReactFlow>
      {pendingConnection && (
        <PromptDialog
          title="New transition"
          label="Event name (e.g. USER_MESSAGE)"
          initial=""
          validate={(v) => (/^[A-Z][A-Z0-9_]*$/.test(v) ? undefined : 'Use capitals, digits and _, starting with a letter')}
          onCancel={() => setPendingConnection(undefined)}
          onSubmit={(event) => {
            const { source, target } = pendingConnection;
            setPendingConnection(undefined);
            const targetName = graph?.nodes.find((n) => n.id === target)?.data.name;
            let created: string | undefined;
            apply((s) => {
              const result = addTransition(s, source, { kind: 'on', event }, { target: targetName });
              if (result.ok) created = result.pointer;
              return result;
            });
            if (created) select({ kind: 'transition', id: created });
          }}
        />
      )}
    </div>
  );
}

/** Grows the saved size of the parents of a moved child so that they still hold it. */
function growParents<T extends { layout?: Record<string, { x: number; y: number; width?: number; height?: number }> }>(
  spec: T, nodes: GraphNode[], id: string, position: { x: number; y: number }, width: number, height: number,
): T {
  const node = nodes.find((n) => n.id === id);
  const parent = node?.parentId ? nodes.find((n) => n.id === node.parentId) : undefined;
  if (!parent) return spec;
  const saved = spec.layout?.[parent.data.layoutKey];
  const needW = Math.max(parent.width, position.x + width + 24);
  const needH = Math.max(parent.height, position.y + height + 24);
  if (saved && needW <= (saved.width ?? parent.width) && needH <= (saved.height ?? parent.height)) return spec;
  return { ...spec, layout: { ...(spec.layout ?? {}), [parent.data.layoutKey]: { x: saved?.x ?? parent.position.x, y: saved?.y ?? parent.position.y, width: needW, height: needH } } };
}
