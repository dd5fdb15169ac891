import type { NodeProps } from '@xyflow/react';
import { StateNode, type StateNodeView } from '../components/StateNode.tsx';

/** Inspect marks carried by a state node, on top of the editor's display data. */
export interface StateMarks {
  refusal?: { event: string; code: string; reason: string };
  visits?: number;
}

/**
 * The editor's state node, read-only, with the Inspect overlays: the refusal of the viewed event at the state that
 * refused it (event and code named, in red) and how often the state was entered.
 */
export function InspectStateNode(props: NodeProps<StateNodeView>) {
  const marks = (props.data as StateNodeView['data'] & { inspect?: StateMarks }).inspect;
  return (
    <>
      <StateNode {...props} />
      {marks?.refusal && (
        <div className="inspect-refusal" data-testid={`refusal-${props.data.name}`} title={marks.refusal.reason}>
          ✕ {marks.refusal.event} refused: {marks.refusal.code}
        </div>
      )}
      {marks?.visits !== undefined && marks.visits > 1 && (
        <span className="inspect-visits" title="times entered">
          ×{marks.visits}
        </span>
      )}
    </>
  );
}
