import type { RuntimeEvent } from '@flowing/protocol';
import { shortId } from '../short-id.ts';
import { messageMatch } from './child-runs.ts';
import { openSessionAt } from './seek.ts';
import './links.css';

/**
 * The link of an event to another session: a channel message opens the other end at its own log line of the same
 * message; a child session's start, wait or end opens the child at this event's time. Nothing for other events.
 */
export function EventLink({ event }: { event: RuntimeEvent }) {
  const message = messageMatch(event);
  const d = event.data as { childId?: unknown; machine?: unknown };
  if (message) {
    const machine = event.type === 'channel.sent' && typeof d.machine === 'string' ? d.machine : undefined;
    const toward = event.type === 'channel.sent' ? 'receiver' : 'sender';
    return (
      <button
        type="button"
        className="link event-link"
        data-testid="event-link"
        data-session={message.sessionId}
        title={`Open the ${toward}, session ${message.sessionId}, at its ${message.type} of this message`}
        onClick={() =>
          void openSessionAt(message.sessionId, machine, { kind: 'message', type: message.type, messageId: message.messageId })
        }
      >
        {event.type === 'channel.sent' ? '→' : '←'} {shortId(message.sessionId)} ↗
      </button>
    );
  }
  if (event.type.startsWith('machine.') && typeof d.childId === 'string') {
    const childId = d.childId;
    return (
      <button
        type="button"
        className="link event-link"
        data-testid="event-link"
        data-session={childId}
        title={`Open child session ${childId} at the time of this event`}
        onClick={() => void openSessionAt(childId, typeof d.machine === 'string' ? d.machine : undefined, { kind: 'time', at: event.at })}
      >
        ▣ {shortId(childId)} ↗
      </button>
    );
  }
  return null;
}
