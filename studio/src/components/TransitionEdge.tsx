import { BaseEdge, EdgeLabelRenderer, type Edge, type EdgeProps } from '@xyflow/react';
import type { TransitionEdgeData } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';

/** Display data of a transition edge: the graph data plus its problems. */
export type TransitionEdgeView = Edge<TransitionEdgeData & { errors: number; firstProblem?: string }, 'transition'>;

/** The data-testid of a transition's label: `edge-<source>-<kind>[-<key>]-<index>`. */
export function edgeTestId(data: Pick<TransitionEdgeData, 'sourceName' | 'kind' | 'key' | 'index'>): string {
  return `edge-${data.sourceName}-${data.kind}${data.key !== undefined ? `-${data.key}` : ''}-${data.index}`;
}

/** A transition: a curve (a loop for self-transitions), styled by kind, labelled `EVENT [guard]`. */
export function TransitionEdge({ id, source, target, sourceX, sourceY, targetX, targetY, data, selected, markerEnd }: EdgeProps<TransitionEdgeView>) {
  const select = useEditor((s) => s.select);
  if (!data) return null;
  let path: string;
  let labelX: number;
  let labelY: number;
  if (source === target) {
    const lift = 70 + data.lane * 26;
    path = `M ${sourceX} ${sourceY} C ${sourceX + 70} ${sourceY - lift}, ${targetX - 70} ${targetY - lift}, ${targetX} ${targetY}`;
    labelX = (sourceX + targetX) / 2;
    labelY = sourceY - lift * 0.75;
  } else {
    const dx = targetX - sourceX;
    const dy = targetY - sourceY;
    const length = Math.hypot(dx, dy) || 1;
    const spread = (data.lane - (data.lanes - 1) / 2) * 46;
    const bow = dx < 0 ? 60 : 0;
    const cx = (sourceX + targetX) / 2 + (-dy / length) * (spread + bow);
    const cy = (sourceY + targetY) / 2 + (dx / length) * (spread + bow);
    path = `M ${sourceX} ${sourceY} Q ${cx} ${cy} ${targetX} ${targetY}`;
    labelX = 0.25 * sourceX + 0.5 * cx + 0.25 * targetX;
    labelY = 0.25 * sourceY + 0.5 * cy + 0.25 * targetY;
  }
  const testId = edgeTestId(data);
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} className={`transition-edge transition-edge--${data.kind}${data.internal ? ' transition-edge--internal' : ''}`} />
      <EdgeLabelRenderer>
        <button
          type="button"
          className={`edge-label edge-label--${data.kind}${selected ? ' edge-label--selected' : ''}${data.errors > 0 ? ' edge-label--error' : ''} nodrag nopan`}
          style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)`, zIndex: 1001 }}
          data-testid={testId}
          title={data.firstProblem ?? data.label}
          onClick={(event) => { event.stopPropagation(); select({ kind: 'transition', id }); }}
        >
          {data.label || '(no event)'}
          {data.internal && <span className="edge-label__note"> (stays)</span>}
          {data.errors > 0 && <span className="badge badge--error" data-testid={`badge-${testId}`}>{data.errors}</span>}
        </button>
      </EdgeLabelRenderer>
    </>
  );
}
