import type { SessionAt } from '@flowing/protocol';
import { useState } from 'react';
import { runAction } from './inspect-actions.ts';
import { useInspect } from './inspect-store.ts';
import { shortId } from './short-id.ts';

const FINISHED = new Set(['done', 'error', 'cancelled']);

/** The selected session's status and stream, the pending approval with Approve / Reject, Cancel, and the last answer. */
export function SessionControls({ sessionId, live }: { sessionId: string; live: SessionAt }) {
  const streamState = useInspect((s) => s.streamState);
  const lastAnswer = useInspect((s) => s.lastAnswer);
  const [reason, setReason] = useState('');
  const approval = live.approval && !live.approval.decision ? live.approval : null;
  return (
    <section className="inspect-controls" aria-label="session controls">
      <div className="inspect-controls__line">
        <span className={`status-chip status-chip--${live.status}`} data-testid="inspect-status">
          {live.status.replace('_', ' ')}
        </span>
        <span
          className={`stream-state stream-state--${streamState}`}
          data-testid="inspect-stream-state"
          title="the live stream of this session's events"
        >
          {streamState}
        </span>
        <code className="inspect-controls__id" title={`session ${sessionId}`} data-testid="session-id">
          {shortId(sessionId, 40)}
        </code>
        <button
          type="button"
          disabled={FINISHED.has(live.status)}
          data-testid="inspect-cancel"
          onClick={() => void runAction('Cancel', (client) => client.cancel(sessionId).then(() => undefined))}
        >
          Cancel session
        </button>
      </div>
      {approval && (
        <fieldset className="inspect-approval" data-testid="inspect-approval" aria-label="pending approval">
          <strong>{approval.tool}</strong> waits for approval in <code>{approval.state}</code>
          <pre className="inspect-approval__args">{JSON.stringify(approval.args, null, 2)}</pre>
          <div className="inspect-approval__actions">
            <button
              type="button"
              className="primary"
              data-testid="inspect-approve"
              onClick={() => void runAction('Approve', (client) => client.approve(sessionId, approval.approvalId))}
            >
              Approve
            </button>
            <input
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              placeholder="reason (optional)"
              data-testid="inspect-reject-reason"
            />
            <button
              type="button"
              data-testid="inspect-reject"
              onClick={() => void runAction('Reject', (client) => client.reject(sessionId, approval.approvalId, reason || undefined))}
            >
              Reject
            </button>
          </div>
        </fieldset>
      )}
      {lastAnswer && (
        <p className={`inspect-answer inspect-answer--${lastAnswer.kind}`} data-testid="inspect-answer" data-code={lastAnswer.code ?? ''}>
          {lastAnswer.message}
        </p>
      )}
    </section>
  );
}
