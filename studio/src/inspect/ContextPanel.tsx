import type { RuntimeEvent, SessionAt } from '@flowing/protocol';
import { useMemo } from 'react';
import { diffContext } from './context-diff.ts';
import { assembleMessages } from './messages.ts';

const show = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));

/**
 * The context at the viewed event with the change that event made (paths, before → after), the calls in flight, and
 * the streamed messages assembled from their deltas.
 */
export function ContextPanel({
  view,
  before,
  events,
  index,
}: {
  view: SessionAt;
  before: SessionAt;
  events: readonly RuntimeEvent[];
  index: number;
}) {
  const changes = useMemo(() => diffContext(before.context, view.context), [before.context, view.context]);
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
              <code>{c.path}</code>: <span className="diff-before">{show(c.before)}</span> →{' '}
              <span className="diff-after">{show(c.after)}</span>
            </li>
          ))}
        </ul>
      )}
      <pre className="inspect-context__value" data-testid="inspect-context">
        {JSON.stringify(view.context ?? null, null, 2)}
      </pre>
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
