import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { Point, StateNodeData } from '../graph/index.ts';
import { EmitBadge } from './ChannelBadges.tsx';
import { InvokeBlock } from './InvokeBlock.tsx';
import { Icon } from './Icon.tsx';

/** Display data of a state node: the graph data, its problems, and the laid-out places of its done/error ports. */
export type StateNodeView = Node<
  StateNodeData & { errors: number; warnings: number; firstProblem?: string; ports?: { done?: Point; error?: Point } },
  'state'
>;

/** A state on the canvas: initial marker, type, tags, the invoked tool or model call as a block, and error badges. */
export function StateNode({ data, selected, width }: NodeProps<StateNodeView>) {
  const isGroup = data.type === 'compound' || data.type === 'parallel';
  const tags = (data.skeleton.tags as string[] | undefined) ?? [];
  const invoke = data.skeleton.invoke as Parameters<typeof InvokeBlock>[0]['invoke'] | undefined;
  const classes = [
    'state-node',
    `state-node--${data.type}`,
    data.isRegion ? 'state-node--region' : '',
    data.isInitial ? 'state-node--initial' : '',
    selected ? 'state-node--selected' : '',
    data.errors > 0 ? 'state-node--error' : '',
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <div className={classes} data-testid={`state-${data.name}`} title={data.firstProblem}>
      <Handle
        id="in"
        type="target"
        position={Position.Top}
        className="state-handle state-handle--in"
        title="incoming transitions end here"
      />
      <div className={isGroup ? 'state-node__header state-node__header--group' : 'state-node__header'}>
        {data.isInitial && (
          <span className="state-node__initial" role="img" title="initial state" aria-label="initial state">
            <Icon name="initial" size={11} />
          </span>
        )}
        <span className="state-node__name" title={data.name}>
          {data.name}
        </span>
        <EmitBadge stateName={data.name} layoutKey={data.layoutKey} />
        {data.type !== 'atomic' && (
          <span className={`state-node__type state-node__type--${data.type}`}>{data.isRegion ? `region · ${data.type}` : data.type}</span>
        )}
        {data.errors > 0 && (
          <span className="badge badge--error" data-testid={`badge-state-${data.name}`} title={data.firstProblem}>
            {data.errors}
          </span>
        )}
        {data.errors === 0 && data.warnings > 0 && (
          <span className="badge badge--warning" title={data.firstProblem}>
            {data.warnings}
          </span>
        )}
      </div>
      {tags.length > 0 && (
        <div className="state-node__tags">
          {tags.map((t) => (
            <span key={t} className="tag">
              {t}
            </span>
          ))}
        </div>
      )}
      {invoke && <InvokeBlock invoke={invoke} stateName={data.name} width={width ?? 220} ports={data.ports} />}
      {data.type !== 'final' && (
        <Handle
          id="out"
          type="source"
          position={Position.Right}
          className="state-handle state-handle--out"
          title="drag to a state (or back onto this one) to add a transition: event, delay or always"
          data-testid={`handle-${data.name}-out`}
        />
      )}
    </div>
  );
}
