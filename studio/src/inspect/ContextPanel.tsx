import type { RuntimeEvent, SessionAt } from '@flowing/protocol';
import { useMemo } from 'react';
import { diffContext } from './context-diff.ts';
import { ConversationTranscript } from './ConversationTranscript.tsx';
import { assembleMessages } from './messages.ts';

const show = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));

/**
 * The context at the viewed event with the change that event made (paths, before → after), the calls in flight, and
 * the streamed messages assembled from their deltas. Conversation fields are shown as chat transcripts, the rest as JSON.
 */
export function ContextPanel({
  view,
  before,
  events,
  index,
  conversationFields = [],
}: {
  view: SessionAt;
  before: SessionAt;
  events: readonly RuntimeEvent[];
  index: number;
  /** The context fields the machine declares with type conversation. */
  conversationFields?: readonly string[];
}) {
  const changes = useMemo(() => diffContext(before.context, view.context), [before.context, view.context]);
  const { rest, conversations } = useMemo(() => splitConversations(view.context, conversationFields), [view.context, conversationFields]);
  const messages = useMemo(() => assembleMessages(events, index), [events, index]);
  return (
    <section className="inspect-context" aria-label="context">
      <h3>
        Context <span className="inspect-hint">at event {view.seq}</span>
      </h3>
      {changes.length > 0 && (
        <ul className="inspect-context__changes" data-testid="inspect-context-changes">
          {changes.map((c) => (
            <li key={c.path}>
              <code>{c.path}</code>:{' '}
              {conversationFields.includes(c.path) ? (
                <span className="diff-after">{messageCountChange(c.before, c.after)}</span>
              ) : (
                <>
                  <span className="diff-before">{show(c.before)}</span> → <span className="diff-after">{show(c.after)}</span>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <pre className="inspect-context__value" data-testid="inspect-context">
        {JSON.stringify(rest ?? null, null, 2)}
      </pre>
      {conversations.map(([field, value]) => (
        <ConversationTranscript key={field} field={field} value={value} />
      ))}
      {view.pendingCalls.length > 0 && (
        <div className="inspect-context__calls" data-testid="inspect-pending-calls">
          <h4>In flight</h4>
          {view.pendingCalls.map((c) => (
            <div key={c.callId}>
              <code>
                {c.kind} {c.name}
              </code>{' '}
              attempt {c.attempt}
            </div>
          ))}
        </div>
      )}
      {messages.length > 0 && (
        <div className="inspect-messages" data-testid="inspect-messages">
          <h4>Messages</h4>
          {messages.map((m) => (
            <p
              key={m.callId}
              className={m.complete ? 'inspect-message' : 'inspect-message inspect-message--streaming'}
              data-complete={m.complete}
            >
              {m.text}
              {m.complete ? '' : '▍'}
            </p>
          ))}
        </div>
      )}
    </section>
  );
}

/** The context without its conversation fields (shown as transcripts), and those fields' values in declared order. */
function splitConversations(context: unknown, fields: readonly string[]): { rest: unknown; conversations: Array<[string, unknown]> } {
  if (fields.length === 0 || context === null || typeof context !== 'object') return { rest: context, conversations: [] };
  const rest: Record<string, unknown> = { ...(context as Record<string, unknown>) };
  const conversations: Array<[string, unknown]> = [];
  for (const field of fields) {
    conversations.push([field, rest[field]]);
    delete rest[field];
  }
  return { rest, conversations };
}

/** A conversation's change as a count of messages (`+2 messages`); the transcript below shows them. */
function messageCountChange(before: unknown, after: unknown): string {
  const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);
  const delta = count(after) - count(before);
  const word = Math.abs(delta) === 1 ? 'message' : 'messages';
  return delta >= 0 ? `+${delta} ${word}` : `${delta} ${word}`;
}
