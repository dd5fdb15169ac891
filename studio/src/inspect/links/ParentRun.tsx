import type { RuntimeEvent } from '@flowing/protocol';
import { shortId } from '../short-id.ts';
import { openSessionAt } from './seek.ts';
import './links.css';

/**
 * For a child session: the session whose machine invoke started it and the invoking state, with a link that opens
 * the parent at the time of the viewed step of the child. Nothing for any other session.
 */
export function ParentRun({ events, index }: { events: readonly RuntimeEvent[]; index: number }) {
  const started =
    events[0]?.type === 'session.started'
      ? (events[0].data as { parentId?: unknown; parentState?: unknown; parentCallId?: unknown })
      : undefined;
  if (typeof started?.parentId !== 'string' || typeof started.parentCallId !== 'string') return null;
  const parentId = started.parentId;
  const viewed = events[index] ?? events[0]!;
  return (
    <p className="child-runs parent-run" data-testid="parent-run" data-parent={parentId}>
      child session of{' '}
      <button
        type="button"
        className="link"
        data-testid="open-parent"
        title={`Open session ${parentId} at the time of event #${viewed.seq} of this session`}
        onClick={() => void openSessionAt(parentId, undefined, { kind: 'time', at: viewed.at })}
      >
        {shortId(parentId)} ↗
      </button>{' '}
      started in its state <code>{String(started.parentState)}</code>
    </p>
  );
}
