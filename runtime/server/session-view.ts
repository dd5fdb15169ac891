import { activeStatePaths, type SessionView } from '@flowing/protocol';
import type { SessionSnapshot } from '../runtime.ts';

export type { SessionView };

/** What `GET /sessions/:id` answers for a snapshot (the view is declared in @flowing/protocol). */
export function toSessionView(snapshot: SessionSnapshot): SessionView {
  const approval = snapshot.approval;
  return {
    sessionId: snapshot.sessionId,
    machineId: snapshot.machineId,
    specHash: snapshot.specHash,
    traceId: snapshot.traceId,
    status: snapshot.status,
    state: snapshot.state,
    activeStates: activeStatePaths(snapshot.state),
    context: snapshot.context,
    pendingApproval:
      approval && !approval.decision
        ? { approvalId: approval.id, state: approval.state, tool: approval.tool, args: approval.args, argsHash: approval.argsHash }
        : null,
    usage: snapshot.usage,
    seq: snapshot.seq,
    step: snapshot.step,
    error: snapshot.error ? { code: snapshot.error.code, message: snapshot.error.message } : null,
    parentId: snapshot.fork?.parentId ?? null,
    forkedAt: snapshot.fork?.forkedAt ?? null,
  };
}
