import { SESSION_STATUSES, type SessionStatus } from '@flowing/protocol';
import { useInspect } from './inspect-store.ts';
import { timeText } from './event-summary.ts';
import { shortId } from './short-id.ts';
import { pickSession } from './inspect-actions.ts';
import { nestingDepths } from './links/session-tree.ts';

/**
 * The sessions of the open machine, newest first, filtered by status, with attention and approval badges; child
 * sessions indented under the session that started them.
 */
export function SessionsList() {
  const sessions = useInspect((s) => s.sessions);
  const selected = useInspect((s) => s.selectedSessionId);
  const statusFilter = useInspect((s) => s.statusFilter);
  const allMachines = useInspect((s) => s.allMachines);
  const { setStatusFilter, setAllMachines } = useInspect.getState();
  const depths = nestingDepths(sessions);
  const toggle = (status: SessionStatus) =>
    setStatusFilter(statusFilter.includes(status) ? statusFilter.filter((s) => s !== status) : [...statusFilter, status]);
  return (
    <section className="inspect-sessions" aria-label="sessions">
      <header className="inspect-sessions__head">
        <h3>Sessions</h3>
        <span className="inspect-hint" title="re-read every second">
          live
        </span>
      </header>
      <fieldset className="inspect-sessions__filter" aria-label="filter by status">
        {SESSION_STATUSES.map((status) => (
          <label key={status} className={`status-chip status-chip--${status}`}>
            <input
              type="checkbox"
              checked={statusFilter.includes(status)}
              onChange={() => toggle(status)}
              data-testid={`inspect-filter-${status}`}
            />
            {status.replace('_', ' ')}
          </label>
        ))}
      </fieldset>
      <label className="inspect-sessions__all">
        <input type="checkbox" checked={allMachines} onChange={() => setAllMachines(!allMachines)} data-testid="inspect-all-machines" />
        every machine's sessions
      </label>
      <ul className="inspect-sessions__list" data-testid="inspect-sessions">
        {sessions.length === 0 && <li className="inspect-hint">No sessions{statusFilter.length > 0 ? ' with these statuses' : ''} yet.</li>}
        {sessions.map((s, i) => (
          <li key={s.sessionId} style={depths[i]! > 0 ? { paddingLeft: depths[i]! * 14 } : undefined}>
            <button
              type="button"
              className={`inspect-session${s.sessionId === selected ? ' inspect-session--selected' : ''}${depths[i]! > 0 ? ' inspect-session--child' : ''}`}
              onClick={() => void pickSession(s.sessionId, s.machineId)}
              data-testid="inspect-session"
              data-session-id={s.sessionId}
              data-status={s.status}
              data-depth={depths[i]}
              data-parent={s.parentId ?? ''}
              title={s.parentId ? `child session of ${s.parentId}` : undefined}
            >
              <span className={`status-chip status-chip--${s.status}`}>{s.status.replace('_', ' ')}</span>
              {s.status === 'needs_attention' && (
                <span className="badge badge--error" title="a call's outcome is unknown or a result was refused: a person decides">
                  needs attention
                </span>
              )}
              {s.awaitingApproval && (
                <span className="badge badge--approval" data-testid="badge-approval" title="waits for APPROVE or REJECT">
                  approval
                </span>
              )}
              <span className="inspect-session__id" title={s.sessionId}>
                {shortId(s.sessionId)}
              </span>
              <span className="inspect-session__machine">{s.machineId}</span>
              <span
                className="inspect-session__times"
                title={`started ${new Date(s.createdAt).toLocaleString()}, last event ${new Date(s.updatedAt).toLocaleString()}`}
              >
                {timeText(s.createdAt).slice(0, 8)} · last {timeText(s.updatedAt).slice(0, 8)} · #{s.seq}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
