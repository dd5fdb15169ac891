import { graphOf } from '../store/graph-cache.ts';
import {
  Background,
  ControlButton,
  Controls,
  MarkerType,
  MiniMap,
  ReactFlow,
  applyNodeChanges,
  useReactFlow,
  type Connection,
  type NodeChange,
  type NodeMouseHandler,
  type EdgeMouseHandler,
  type OnNodeDrag,
} from '@xyflow/react';
import { useCallback, useEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import {
  absoluteBoxes,
  addTransition,
  LARGE_MACHINE_STATES,
  moveState,
  problemsByElement,
  routeIfCurrent,
  setStateLayout,
  type GraphNode,
  type TransitionPlace,
} from '../graph/index.ts';
import type { SpecProblem } from '@flowing/spec';
import { useAddState } from '../hooks/useAddState.ts';
import { useStableCallback } from '../hooks/useStableCallback.ts';
import { useFitView } from '../hooks/useFitView.ts';
import { useEditor } from '../store/editor-store.ts';
import { ConnectDialog } from './ConnectDialog.tsx';
import { EmptyHint } from './EmptyHint.tsx';
import { StateNode, type StateNodeView } from './StateNode.tsx';
import { TransitionEdge, type TransitionEdgeView } from './TransitionEdge.tsx';
import { growParents, markAfterPaint } from './canvas-helpers.ts';
import { Icon } from './Icon.tsx';

/**
 * The previous array when every item is the same object as before (an edit that changed no state or transition
 * view): React Flow then has nothing to adopt again.
 */
function sameOrNew<T>(last: { current: T[] }, next: T[]): T[] {
  const previous = last.current;
  if (previous.length === next.length && next.every((item, i) => item === previous[i])) return previous;
  last.current = next;
  return next;
}

const nodeTypes = { state: StateNode };
const PRO_OPTIONS = { hideAttribution: true };
const MINIMAP_STYLE = { width: 168, height: 112 };
const minimapColor = (n: { data: unknown }) =>
  (n.data as StateNodeView['data']).type === 'compound' || (n.data as StateNodeView['data']).type === 'parallel'
    ? 'rgb(47 111 221 / 12%)'
    : '#8a96a8';
const edgeTypes = { transition: TransitionEdge };

/** The graph editor canvas: states and transitions of the open machine, editable by drag, connect and double-click. */
export function Canvas() {
  const spec = useEditor((s) => s.spec);
  const problems = useEditor((s) => s.problems);
  const codegenProblems = useEditor((s) => s.codegenProblems);
  const selection = useEditor((s) => s.selection);
  const centerRequest = useEditor((s) => s.centerRequest);
  const fitRequest = useEditor((s) => s.fitRequest);
  const geometry = useEditor((s) => s.geometry);
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  const flow = useReactFlow();
  const fitView = useFitView();
  const [pendingConnection, setPendingConnection] = useState<Connection | undefined>();

  const graph = useMemo(() => (spec ? graphOf(spec) : undefined), [spec]);
  const byElement = useMemo(
    () => (graph ? problemsByElement(graph, [...problems, ...codegenProblems]) : new Map<string, SpecProblem[]>()),
    [graph, problems, codegenProblems],
  );
  const specBoxes = useMemo(() => absoluteBoxes(graph?.nodes ?? []), [graph]);

  // Unchanged states and transitions keep their view objects, so React Flow re-renders only what an edit touched
  // (a 300-state machine would otherwise redraw every state on each keystroke in the panel).
  const nodeViews = useRef(new Map<string, { key: string; view: StateNodeView }>());
  const edgeViews = useRef(new Map<string, { key: string; route: unknown; view: TransitionEdgeView }>());

  const lastNodes = useRef<StateNodeView[]>([]);
  const lastEdges = useRef<TransitionEdgeView[]>([]);
  const viewNodes = useMemo<StateNodeView[]>(
    () =>
      sameOrNew(
        lastNodes,
        (graph?.nodes ?? []).map((node) => {
          const list = byElement.get(node.id) ?? [];
          const errors = list.filter((p) => p.severity === 'error').length;
          const box = specBoxes.get(node.id);
          const laid = geometry?.nodes[node.id];
          const current = !!box && !!laid && Math.abs(box.x - laid.x) < 0.5 && Math.abs(box.y - laid.y) < 0.5;
          const ports = current ? geometry?.ports[node.id] : undefined;
          const selected = selection?.kind === 'state' && selection.id === node.id;
          const key = JSON.stringify([
            node.position,
            node.parentId,
            node.width,
            node.height,
            node.data,
            errors,
            list.length,
            list[0]?.message,
            selected,
            ports,
          ]);
          const cached = nodeViews.current.get(node.id);
          if (cached?.key === key) return cached.view;
          const view: StateNodeView = {
            id: node.id,
            type: 'state',
            position: node.position,
            parentId: node.parentId,
            width: node.width,
            height: node.height,
            // The size is known (the node is drawn at exactly this size): a view without it would count as unmeasured,
            // and each edit that hands React Flow the cached views would have it measure every state again.
            measured: { width: node.width, height: node.height },
            zIndex: node.data.depth,
            selected,
            data: { ...node.data, errors, warnings: list.length - errors, firstProblem: list[0]?.message, ports },
          };
          nodeViews.current.set(node.id, { key, view });
          return view;
        }),
      ),
    [graph, byElement, selection, geometry, specBoxes],
  );

  const [nodes, setNodes] = useState<StateNodeView[]>([]);
  useEffect(() => {
    setNodes(viewNodes);
  }, [viewNodes]);
  // While a state is dragged, its edges leave the laid-out routes; the set changes only when a drag starts or ends.
  const [dragging, setDragging] = useState<string | undefined>();

  const edges = useMemo<TransitionEdgeView[]>(
    () =>
      sameOrNew(
        lastEdges,
        (graph?.edges ?? [])
          .filter((e) => !e.data.dangling)
          .map((edge) => {
            const list = byElement.get(edge.id) ?? [];
            const errors = list.filter((p) => p.severity === 'error').length;
            const moving =
              dragging !== undefined && [edge.source, edge.target].some((id) => id === dragging || id.startsWith(dragging + '/'));
            const route = moving
              ? undefined
              : routeIfCurrent(
                  geometry,
                  { id: edge.id, source: edge.source, target: edge.target, text: edge.data.lines.join('\n') },
                  specBoxes,
                );
            const selected = selection?.kind === 'transition' && selection.id === edge.id;
            const key = JSON.stringify([edge.source, edge.target, edge.sourceHandle, edge.data, errors, list[0]?.message, selected]);
            const cached = edgeViews.current.get(edge.id);
            if (cached?.key === key && cached.route === route) return cached.view;
            const view: TransitionEdgeView = {
              id: edge.id,
              type: 'transition',
              source: edge.source,
              target: edge.target,
              sourceHandle: edge.sourceHandle ?? 'out',
              targetHandle: 'in',
              selected,
              markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
              data: { ...edge.data, errors, firstProblem: list[0]?.message, route },
            };
            edgeViews.current.set(edge.id, { key, route, view });
            return view;
          }),
      ),
    [graph, byElement, selection, geometry, specBoxes, dragging],
  );

  const fitted = useRef(-1);
  const hasNodes = nodes.length > 0;
  useEffect(() => {
    // Fit once per request (a machine opened or laid out again), not on every edit. States carry their sizes, so this
    // needs no measuring (with only visible states rendered, off-screen ones are never measured).
    if (!hasNodes || fitted.current === fitRequest) return;
    const id = window.setTimeout(() => {
      fitted.current = fitRequest;
      fitView();
      if (performance.getEntriesByName('flowing:open:start').length > 0) {
        requestAnimationFrame(() => {
          performance.mark('flowing:open:interactive');
          performance.measure('flowing:open', 'flowing:open:start', 'flowing:open:interactive');
          // Measured once per open: a later fit (the elkjs layout replacing a quick placement) is not an open.
          performance.clearMarks('flowing:open:start');
          document.body.dataset.canvasReady = String(Date.now());
          useEditor.getState().drawn();
        });
      }
    }, 0);
    return () => window.clearTimeout(id);
  }, [fitRequest, hasNodes, fitView]);

  // An edit (a guard typed in the panel, a drop) is measured from the store's change to the next painted frame.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per new graph on purpose; the graph is the trigger, not an input
  useEffect(() => {
    markAfterPaint('flowing:edit');
  }, [graph]);

  // Centres the view only when a panel asks for it (`select(…, true)`: a problem, a target state, a transition in a list);
  // a click on the canvas or an edit changes the selection or the edges too, and must not move the view.
  // biome-ignore lint/correctness/useExhaustiveDependencies: centerRequest is the only trigger; selection and edges are read as they are at that request
  useEffect(() => {
    if (!selection || selection.kind === 'machine' || centerRequest === 0) return;
    const center = (() => {
      if (selection.kind === 'state') {
        // From the spec's boxes: a state added this moment has no measured node in React Flow yet.
        const box = specBoxes.get(selection.id);
        return box && { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      }
      const label = edges.find((e) => e.id === selection.id)?.data?.route?.label;
      if (label) return { x: label.x + label.width / 2, y: label.y + label.height / 2 };
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
  }, [centerRequest]);

  const onNodesChange = useCallback((changes: NodeChange<StateNodeView>[]) => {
    const kept = changes.filter((c) => c.type === 'position' || c.type === 'dimensions');
    if (kept.some((c) => c.type === 'position' && c.dragging)) {
      performance.mark('flowing:drag-frame:start');
      markAfterPaint('flowing:drag-frame');
    }
    setNodes((current) => applyNodeChanges(kept, current));
  }, []);

  const absolute = (id: string) => flow.getInternalNode(id)?.internals.positionAbsolute ?? { x: 0, y: 0 };

  const onNodeDragStop: OnNodeDrag<StateNodeView> = (_event, node) => {
    setDragging(undefined);
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
    performance.mark('flowing:edit:start');
    if ((parent?.id ?? undefined) !== node.parentId) {
      const origin = parent ? absolute(parent.id) : { x: 0, y: 0 };
      apply((s) => moveState(s, data.pointer, parent?.id, { x: abs.x - origin.x, y: abs.y - origin.y }), {
        select: { kind: 'state', id: parent ? `${parent.id}/states/${data.name}` : `/states/${data.name}` },
      });
      return;
    }
    apply((s) =>
      growParents(
        setStateLayout(s, data.layoutKey, { ...(s.layout?.[data.layoutKey] ?? {}), x: node.position.x, y: node.position.y }),
        graph.nodes,
        node.id,
        node.position,
        w,
        h,
      ),
    );
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

  const createTransition = (source: string, target: string, place: TransitionPlace) => {
    const targetName = graph?.nodes.find((n) => n.id === target)?.data.name;
    let created: string | undefined;
    apply((s) => {
      const result = addTransition(s, source, place, { target: targetName });
      if (result.ok) created = result.pointer;
      return result;
    });
    if (created) select({ kind: 'transition', id: created });
  };

  const onConnect = (connection: Connection) => {
    // A drag from an invoke's done or error port adds a branch at once; a drag from the state asks which kind.
    if (connection.sourceHandle === 'done' || connection.sourceHandle === 'error') {
      createTransition(connection.source, connection.target, { kind: connection.sourceHandle === 'done' ? 'onDone' : 'onError' });
    } else setPendingConnection(connection);
  };

  // Stable identities: React Flow copies each handler into its store whenever it changes (see useStableCallback).
  const handlers = {
    onDoubleClick: useStableCallback(onDoubleClick),
    onNodeDragStart: useStableCallback((_e: unknown, node: StateNodeView) => setDragging(node.id)),
    onNodeDragStop: useStableCallback(onNodeDragStop),
    onNodeClick: useStableCallback(onNodeClick),
    onEdgeClick: useStableCallback(onEdgeClick),
    onNodeDoubleClick: useStableCallback(onNodeDoubleClick),
    onPaneClick: useStableCallback(() => select(null)),
    onConnect: useStableCallback(onConnect),
  };

  if (!spec) return <div className="canvas canvas--empty">Open a machine from the list to start.</div>;
  const pendingSource = pendingConnection && graph?.nodes.find((n) => n.id === pendingConnection.source);
  const pendingTarget = pendingConnection && graph?.nodes.find((n) => n.id === pendingConnection.target);
  return (
    <div className="canvas" data-testid="canvas">
      <ReactFlow<StateNodeView, TransitionEdgeView>
        onDoubleClick={handlers.onDoubleClick}
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onNodeDragStart={handlers.onNodeDragStart}
        onNodeDragStop={handlers.onNodeDragStop}
        onNodeClick={handlers.onNodeClick}
        onEdgeClick={handlers.onEdgeClick}
        onNodeDoubleClick={handlers.onNodeDoubleClick}
        onPaneClick={handlers.onPaneClick}
        onConnect={handlers.onConnect}
        deleteKeyCode={null}
        zoomOnDoubleClick={false}
        minZoom={0.1}
        maxZoom={2}
        elevateNodesOnSelect={false}
        onlyRenderVisibleElements={(graph?.nodes.length ?? 0) > LARGE_MACHINE_STATES}
        proOptions={PRO_OPTIONS}
      >
        <Background gap={20} />
        <Controls showFitView={false} aria-label="zoom controls">
          <ControlButton
            onClick={fitView}
            className="react-flow__controls-fitview"
            title="Fit view (F): the whole machine, text kept legible"
            aria-label="fit view"
            data-testid="fit-view"
          >
            <Icon name="fit" />
          </ControlButton>
        </Controls>
        <MiniMap
          pannable
          zoomable
          ariaLabel="minimap"
          style={MINIMAP_STYLE}
          nodeColor={minimapColor}
          nodeStrokeColor="#5f6b7a"
          nodeStrokeWidth={2}
          maskColor="rgb(240 242 246 / 65%)"
        />
      </ReactFlow>
      <EmptyHint />
      {pendingConnection && pendingSource && pendingTarget && (
        <ConnectDialog
          sourceName={pendingSource.data.name}
          targetName={pendingTarget.data.name}
          kinds={[
            'on',
            'after',
            'always',
            ...(pendingSource.data.type === 'compound' || pendingSource.data.type === 'parallel' ? ['done' as const] : []),
            ...(pendingSource.data.skeleton.invoke ? ['onDone' as const, 'onError' as const] : []),
          ]}
          onCancel={() => setPendingConnection(undefined)}
          onSubmit={(place) => {
            const { source, target } = pendingConnection;
            setPendingConnection(undefined);
            createTransition(source, target, place);
          }}
        />
      )}
    </div>
  );
}
