import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { StateNodeData } from '../graph/index.ts';

/** Display data of a state node: the graph data plus its problems. */
export type StateNodeView = Node<StateNodeData & { errors: number; warnings: number; firstProblem?: string }, 'state'>;

function invokeLabel(skeleton: Record<string, unknown>): { kind: string; name: string } | undefined {
  const invoke = skeleton.invoke as { tool?: string; llm?: string } | undefined;
  if (!invoke) return undefined;
  if (invoke.tool !== undefined) return { kind: 'tool', name: invoke.tool };
  return { kind: 'model', name: invoke.llm ?? '?' };
}

/** A state on the canvas: initial marker, type, tags, the invoked tool or model call, and a red badge for errors. */
export function StateNode({ data, selected }: NodeProps<StateNodeView>) {
  const isGroup = data.type === 'compound' || data.type === 'parallel';
  const tags = (data.skeleton.tags as string[] | undefined) ?? [];
  const invoke = invokeLabel(data.skeleton);
  const classes = [
    'state-node', `state-node--${data.type}`, data.isRegion ? 'state-node--region' : '', data.isInitial ? 'state-node--initial' : '',
    selected ? 'state-node--selected' : '', data.errors > 0 ? 'state-node--error' : '',
  ].filter(Boolean).join(' ');
  return (
    <div className={classes} data-testid={`state-${data.name}`} title={data.firstProblem}>
      <Handle type="target" position={Position.Left} className="state-handle" />
      <div className={isGroup ? 'state-node__header state-node__header--group' : 'state-node__header'}>
        {data.isInitial && <span className="state-node__initial" title="initial state" aria-label="initial state">▶</span>}
        <span className="state-node__name">{data.name}</span>
        {data.type !== 'atomic' && <span className={`state-node__type state-node__type--${data.type}`}>{data.isRegion ? `region · ${data.type}` : data.type}</span>}
        {data.errors > 0 && (
          <span className="badge badge--error" data-testid={`badge-state-${data.name}`} title={data.firstProblem}>{data.errors}</span>
        )}
        {data.errors === 0 && data.warnings > 0 && <span className="badge badge--warning" title={data.firstProblem}>{data.warnings}</span>}
      </div>
      {tags.length > 0 && (
        <div className="state-node__tags">{tags.map((t) => <span key={t} className="tag">{t}</span>)}</div>
      )}
      {invoke && (
        <div className={`state-node__invoke state-node__invoke--${invoke.kind}`} data-testid={`invoke-${data.name}`}>
          <span className="state-node__invoke-kind">{invoke.kind === 'tool' ? '⚙ tool' : '✦ model'}</span> {invoke.name}
        </div>
      )}
      <Handle type="source" position={Position.Right} className="state-handle" />
    </div>
  );
}
