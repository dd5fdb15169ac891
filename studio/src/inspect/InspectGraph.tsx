import type { FlowSpec } from '@flowing/spec';
import {
  Background,
  ControlButton,
  Controls,
  EdgeLabelRenderer,
  MarkerType,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type EdgeProps,
} from '@xyflow/react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Icon } from '../components/Icon.tsx';
import { TransitionEdge, type TransitionEdgeView } from '../components/TransitionEdge.tsx';
import type { StateNodeView } from '../components/StateNode.tsx';
import { absoluteBoxes, fitViewport, graphBounds, routeIfCurrent, type LayoutGeometry } from '../graph/index.ts';
import { graphOf } from '../store/graph-cache.ts';
import { placeForOpen, replaceQuick } from '../store/open-placement.ts';
import type { GraphMarks } from './graph-marks.ts';
import { InspectStateNode } from './InspectStateNode.tsx';
import { DrawnSpec } from '../components/ChannelBadges.tsx';

/** A taken edge shows how often it was taken when more than once. */
function InspectTransitionEdge(props: EdgeProps<TransitionEdgeView>) {
  const count = (props.data as { takenCount?: number } | undefined)?.takenCount ?? 0;
  const box = props.data?.route?.label;
  return (
    <>
      <TransitionEdge {...props} />
      {count > 1 && box && (
        <EdgeLabelRenderer>
          <span className="inspect-edge-count" style={{ transform: `translate(${box.x + box.width - 6}px, ${box.y - 10}px)` }}>
            ×{count}
          </span>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

const nodeTypes = { state: InspectStateNode };
const edgeTypes = { transition: InspectTransitionEdge };

interface LaidOut {
  spec: FlowSpec;
  geometry: LayoutGeometry | undefined;
  /** A coded message when elkjs failed: the states stay where they were placed first. */
  failure: string | undefined;
  of: FlowSpec;
}

/**
 * The spec placed as the editor places it (see `placeForOpen`): saved places, a large machine without any drawn at
 * once at the quick placement and then at the elkjs layout once it arrives (nothing is edited here).
 */
function useLaidOut(spec: FlowSpec): LaidOut | undefined {
  const [laid, setLaid] = useState<LaidOut>();
  useEffect(() => {
    let stale = false;
    const failed = (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      return message.startsWith('STUDIO_LAYOUT_FAILED') ? message : `STUDIO_LAYOUT_FAILED: ${message}`;
    };
    void placeForOpen(spec).then((placed) => {
      if (stale) return;
      const first = { spec: placed.spec, geometry: placed.geometry, failure: placed.failure && failed(placed.failure), of: spec };
      setLaid(first);
      placed.later?.then(
        (geometry) => {
          if (stale) return;
          const next = placed.quick ? replaceQuick(placed.spec, placed.quick, geometry.layout) : placed.spec;
          setLaid({ ...first, spec: next ?? placed.spec, geometry });
        },
        (error: unknown) => {
          if (stale) return;
          console.warn(`${failed(error)}; the graph keeps its first placement`);
          if (placed.quick) setLaid({ ...first, failure: failed(error) });
        },
      );
    });
    return () => {
      stale = true;
    };
  }, [spec]);
  return laid && laid.of === spec ? laid : undefined;
}

/**
 * The open machine's graph, read-only, with the session at the viewed event: active states highlighted (several in
 * parallel regions), the transition just taken animated, the path so far emphasised, and a refusal at the state that
 * refused. `onPainted` is called after the frame that shows a new set of marks.
 */
function Graph({
  spec,
  marks,
  markKey,
  onPainted,
}: {
  spec: FlowSpec;
  marks: GraphMarks | undefined;
  markKey: string;
  onPainted?: () => void;
}) {
  const laid = useLaidOut(spec);
  const graph = useMemo(() => (laid ? graphOf(laid.spec) : undefined), [laid]);
  const boxes = useMemo(() => absoluteBoxes(graph?.nodes ?? []), [graph]);
  const nodes = useMemo<StateNodeView[]>(
    () =>
      (graph?.nodes ?? []).map((node) => {
        const active = marks?.active.has(node.id) ?? false;
        const leaf = marks?.activeLeaves.has(node.id) ?? false;
        const visited = marks?.visits.has(node.id) ?? false;
        const refusal = marks?.refusal && marks.refusal.nodeIds.includes(node.id) ? marks.refusal : undefined;
        const className = [
          active ? 'inspect-node--active' : '',
          leaf ? 'inspect-node--leaf' : '',
          visited ? 'inspect-node--visited' : '',
          refusal ? 'inspect-node--refused' : '',
        ]
          .filter(Boolean)
          .join(' ');
        return {
          id: node.id,
          type: 'state',
          position: node.position,
          parentId: node.parentId,
          width: node.width,
          height: node.height,
          zIndex: node.data.depth,
          draggable: false,
          selectable: false,
          connectable: false,
          className,
          data: {
            ...node.data,
            errors: 0,
            warnings: 0,
            ports: laid?.geometry?.ports[node.id],
            inspect: {
              visits: marks?.visits.get(node.id),
              ...(refusal ? { refusal: { event: refusal.event, code: refusal.code, reason: refusal.reason } } : {}),
            },
          },
        } as StateNodeView;
      }),
    [graph, marks, laid],
  );
  const edges = useMemo<TransitionEdgeView[]>(
    () =>
      (graph?.edges ?? [])
        .filter((e) => !e.data.dangling)
        .map((edge) => {
          const taken = marks?.taken.has(edge.id) ?? false;
          const count = marks?.edgeCounts.get(edge.id) ?? 0;
          return {
            id: edge.id,
            type: 'transition',
            source: edge.source,
            target: edge.target,
            sourceHandle: edge.sourceHandle ?? 'out',
            targetHandle: 'in',
            // Animated by CSS a few times, not React Flow's endless dash: a finished run must not repaint forever.
            selectable: false,
            focusable: false,
            className: [taken ? 'inspect-edge--taken' : '', count > 0 ? 'inspect-edge--used' : ''].filter(Boolean).join(' '),
            markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
            data: {
              ...edge.data,
              errors: 0,
              takenCount: count,
              route: routeIfCurrent(
                laid?.geometry,
                { id: edge.id, source: edge.source, target: edge.target, text: edge.data.lines.join('\n') },
                boxes,
              ),
            },
          } as TransitionEdgeView;
        }),
    [graph, marks, laid, boxes],
  );

  // Fit as the editor does: the whole machine when its text stays legible, else from its initial state, scrolling.
  const flow = useReactFlow();
  const pane = useRef<HTMLDivElement>(null);
  const fit = useCallback(() => {
    const found = graph && graphBounds(graph.nodes, laid?.geometry);
    const rect = pane.current?.getBoundingClientRect();
    if (found && rect && rect.width > 0) void flow.setViewport(fitViewport(found, rect));
  }, [flow, graph, laid]);
  useEffect(() => {
    fit();
  }, [fit]);

  const painted = useRef('');
  useEffect(() => {
    if (!graph || painted.current === markKey) return;
    painted.current = markKey;
    onPainted?.();
  }, [graph, markKey, onPainted]);

  if (!graph) return <div className="inspect-graph inspect-graph--loading">Laying out…</div>;
  return (
    <div
      ref={pane}
      className="inspect-graph"
      data-testid="inspect-graph"
      data-active={[...(marks?.activeLeaves ?? [])].map((id) => graph.nodes.find((n) => n.id === id)?.data.layoutKey).join(' ')}
    >
      {laid?.failure && (
        <div className="inspect-graph__notice" role="status" data-testid="inspect-layout-failed">
          {laid.failure}; states without a saved place are placed in rows.
        </div>
      )}
      <ReactFlow<StateNodeView, TransitionEdgeView>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        deleteKeyCode={null}
        onInit={fit}
        minZoom={0.1}
        maxZoom={2}
        proOptions={{ hideAttribution: true }}
        onlyRenderVisibleElements={graph.nodes.length > 120}
      >
        <Background gap={20} />
        <Controls showInteractive={false} showFitView={false} aria-label="zoom controls">
          <ControlButton onClick={fit} title="Fit view: the whole machine, text kept legible" aria-label="fit view">
            <Icon name="fit" />
          </ControlButton>
        </Controls>
      </ReactFlow>
    </div>
  );
}

/** The read-only graph in its own React Flow instance (the editor's canvas keeps its own). */
export function InspectGraph(props: { spec: FlowSpec; marks: GraphMarks | undefined; markKey: string; onPainted?: () => void }) {
  return (
    <ReactFlowProvider>
      <DrawnSpec.Provider value={props.spec}>
        <Graph {...props} />
      </DrawnSpec.Provider>
    </ReactFlowProvider>
  );
}
