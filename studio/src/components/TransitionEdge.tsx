import { BaseEdge, EdgeLabelRenderer, getSmoothStepPath, type Edge, type EdgeProps } from '@xyflow/react';
import { handoffOfBranch, type EdgeGeometry, type Point, type TransitionEdgeData } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { keyedByText } from './list-keys.ts';

/** Display data of a transition edge: the graph data, its problems, and its laid-out route while that still fits. */
export type TransitionEdgeView = Edge<TransitionEdgeData & { errors: number; firstProblem?: string; route?: EdgeGeometry }, 'transition'>;

/** The data-testid of a transition's label: `edge-<source>-<kind>[-<key>]-<index>`. */
export function edgeTestId(data: Pick<TransitionEdgeData, 'sourceName' | 'kind' | 'key' | 'index'>): string {
  return `edge-${data.sourceName}-${data.kind}${data.key !== undefined ? `-${data.key}` : ''}-${data.index}`;
}

/** An orthogonal polyline with rounded corners through the layout's bend points. */
function roundedPath(points: readonly Point[], radius = 8): string {
  if (points.length === 0) return '';
  let d = `M ${points[0]!.x} ${points[0]!.y}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [a, b, c] = [points[i - 1]!, points[i]!, points[i + 1]!];
    const r = Math.min(radius, Math.hypot(b.x - a.x, b.y - a.y) / 2, Math.hypot(c.x - b.x, c.y - b.y) / 2);
    const toward = (from: Point, to: Point, length: number) => {
      const l = Math.hypot(to.x - from.x, to.y - from.y) || 1;
      return { x: from.x + ((to.x - from.x) / l) * length, y: from.y + ((to.y - from.y) / l) * length };
    };
    const p1 = toward(b, a, r);
    const p2 = toward(b, c, r);
    d += ` L ${p1.x} ${p1.y} Q ${b.x} ${b.y} ${p2.x} ${p2.y}`;
  }
  const last = points[points.length - 1]!;
  return `${d} L ${last.x} ${last.y}`;
}

/** A path and label centre for an edge without a current route: a step path, or a loop beside the state. */
function plainPath(props: EdgeProps<TransitionEdgeView>, lane: number): { path: string; x: number; y: number } {
  const { source, target, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition } = props;
  if (source === target) {
    const out = 40 + lane * 18;
    const right = Math.max(sourceX, targetX) + 130 + lane * 18;
    const path = `M ${sourceX} ${sourceY} L ${sourceX} ${sourceY + out / 2} L ${right} ${sourceY + out / 2} L ${right} ${targetY - out / 2} L ${targetX} ${targetY - out / 2} L ${targetX} ${targetY}`;
    return { path, x: right, y: (sourceY + targetY) / 2 };
  }
  const [path, x, y] = getSmoothStepPath({
    sourceX,
    sourceY,
    targetX,
    targetY,
    sourcePosition,
    targetPosition,
    borderRadius: 8,
    offset: 20 + lane * 10,
  });
  return { path, x, y };
}

/**
 * A transition: the orthogonal route and label box elkjs reserved for it (so the label never covers a state or another
 * label); after a state was moved by hand, a plain step path until the next auto-layout. Styled by kind.
 */
export function TransitionEdge(props: EdgeProps<TransitionEdgeView>) {
  const { id, data, selected, markerEnd } = props;
  const select = useEditor((s) => s.select);
  if (!data) return null;
  const route = data.route;
  const plain = route ? undefined : plainPath(props, data.lane);
  const path = route ? roundedPath(route.points) : plain!.path;
  const box = route?.label;
  // A placed label sits above the states (the layout kept it off every state, so it covers no handle and stays
  // clickable inside a compound state); an unplaced one stays below them, so it never hides a handle.
  const style: React.CSSProperties = box
    ? { transform: `translate(${box.x}px, ${box.y}px)`, width: box.width, height: box.height, zIndex: 1001 }
    : { transform: `translate(-50%, -50%) translate(${plain?.x ?? 0}px, ${plain?.y ?? 0}px)` };
  const testId = edgeTestId(data);
  // A hand-off is an ordinary onDone branch on `output.handoff`: marked, not relabelled (the layout sized the label).
  const handoff = data.kind === 'onDone' ? handoffOfBranch(data.transition) : undefined;
  return (
    <>
      <BaseEdge
        id={id}
        path={path}
        markerEnd={markerEnd}
        className={`transition-edge transition-edge--${data.kind}${data.internal ? ' transition-edge--internal' : ''}${handoff !== undefined ? ' transition-edge--handoff' : ''}`}
      />
      <EdgeLabelRenderer>
        <button
          type="button"
          className={`edge-label edge-label--${data.kind}${selected ? ' edge-label--selected' : ''}${data.errors > 0 ? ' edge-label--error' : ''}${box ? ' edge-label--placed' : ''}${handoff !== undefined ? ' edge-label--handoff' : ''} nodrag nopan`}
          style={style}
          data-testid={testId}
          data-handoff={handoff}
          data-full-label={data.fullLabel}
          data-edge-id={id}
          title={data.firstProblem ? `${data.fullLabel}\n${data.firstProblem}` : data.fullLabel}
          onClick={(event) => {
            event.stopPropagation();
            select({ kind: 'transition', id });
          }}
        >
          {keyedByText(data.lines, (line) => line).map(({ key, item: line }, i) => (
            <span key={key} className={i === 0 ? 'edge-label__head' : 'edge-label__guard'}>
              {line}
            </span>
          ))}
          {data.errors > 0 && (
            <span className="badge badge--error edge-label__badge" data-testid={`badge-${testId}`}>
              {data.errors}
            </span>
          )}
        </button>
      </EdgeLabelRenderer>
    </>
  );
}
