import { NodeToolbar, Position, useStore, type NodeProps } from '@xyflow/react';
import { StateNode, type StateNodeView } from '../components/StateNode.tsx';

/** Inspect marks carried by a state node, on top of the editor's display data. */
export interface StateMarks {
  refusal?: { event: string; code: string; reason: string };
  visits?: number;
}

/** Room the refusal badge needs above a state, in screen pixels; with less, it goes under the state. */
const BADGE_ROOM_PX = 30;
/** About the widest a badge gets; a state closer than this to the right edge has its badge end at its right side. */
const BADGE_WIDTH_PX = 280;

/**
 * The refusal at a state, drawn outside the zoomed canvas (React Flow's node toolbar): it keeps its font size at any
 * zoom, and it sits above the state unless that would cut it off at the top of the canvas, then below.
 */
function RefusalBadge({ name, refusal, x, y }: { name: string; refusal: NonNullable<StateMarks['refusal']>; x: number; y: number }) {
  const tx = useStore((s) => s.transform[0]);
  const ty = useStore((s) => s.transform[1]);
  const zoom = useStore((s) => s.transform[2]);
  const paneWidth = useStore((s) => s.width);
  const below = y * zoom + ty < BADGE_ROOM_PX;
  const atEnd = x * zoom + tx + BADGE_WIDTH_PX > paneWidth;
  return (
    <NodeToolbar isVisible position={below ? Position.Bottom : Position.Top} align={atEnd ? 'end' : 'start'} offset={6}>
      <div className="inspect-refusal" data-testid={`refusal-${name}`} title={refusal.reason}>
        ✕ {refusal.event} refused: {refusal.code}
      </div>
    </NodeToolbar>
  );
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
        <RefusalBadge name={props.data.name} refusal={marks.refusal} x={props.positionAbsoluteX} y={props.positionAbsoluteY} />
      )}
      {marks?.visits !== undefined && marks.visits > 1 && (
        <span className="inspect-visits" title="times entered">
          ×{marks.visits}
        </span>
      )}
    </>
  );
}
