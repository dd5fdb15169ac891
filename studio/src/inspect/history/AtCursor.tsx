import type { SessionAt } from '@flowing/protocol';

const MAX_JSON_CHARS = 20_000;

/** JSON for a value, cut at a size a panel can show. */
export function shortJson(value: unknown, space = 2): string {
  const text = JSON.stringify(value, null, space) ?? 'undefined';
  return text.length > MAX_JSON_CHARS ? `${text.slice(0, MAX_JSON_CHARS)}\n… (${text.length - MAX_JSON_CHARS} more characters)` : text;
}

/**
 * The session as it was right after the event under the cursor, folded from the recorded events: state(s), status,
 * calls in flight and the approval asked for (the context panel beside shows the context).
 */
export function AtCursor({ view }: { view: SessionAt }) {
  return (
    <div
      className="history-at"
      data-testid="history-at"
      data-seq={view.seq}
      data-status={view.status}
      data-states={view.activeStates.join(' ')}
    >
      <div className="history-at__line">
        <span className={`history-status history-status--${view.status}`}>{view.status}</span>
        <span data-testid="history-at-states">{view.activeStates.length > 0 ? view.activeStates.join(', ') : '(no state yet)'}</span>
      </div>
      <div className="history-at__line" data-testid="history-pending-calls" data-count={view.pendingCalls.length}>
        {view.pendingCalls.length === 0 ? (
          <span className="muted">no call in flight</span>
        ) : (
          view.pendingCalls.map((c) => (
            <span key={c.callId} className="history-pending">
              {c.kind} {c.name}
              {c.attempt > 1 ? ` (attempt ${c.attempt})` : ''}
            </span>
          ))
        )}
        {view.approval && (
          <span className="history-pending" data-testid="history-approval">
            approval for {view.approval.tool}: {view.approval.decision ?? 'waiting'}
          </span>
        )}
      </div>
    </div>
  );
}
