import { activeStatePaths, type ChildWaitView, type PendingApproval, type SessionView } from '@flowing/protocol';
import type { SessionSnapshot } from '../runtime.ts';
import type { ChildWait } from '../session/types.ts';
import type { ApprovalRecord } from '../store/types.ts';

export type { SessionView };

/** What `GET /sessions/:id` answers for a snapshot (the view is declared in @flowing/protocol). */
export function toSessionView(snapshot: SessionSnapshot): SessionView {
  return {
    sessionId: snapshot.sessionId,
    machineId: snapshot.machineId,
    specHash: snapshot.specHash,
    traceId: snapshot.traceId,
    status: snapshot.status,
    state: snapshot.state,
    activeStates: activeStatePaths(snapshot.state),
    context: snapshot.context,
    pendingApproval: pendingOf(snapshot.approval),
    usage: snapshot.usage,
    seq: snapshot.seq,
    step: snapshot.step,
    error: snapshot.error ? { code: snapshot.error.code, message: snapshot.error.message } : null,
    parentId: snapshot.fork?.parentId ?? null,
    forkedAt: snapshot.fork?.forkedAt ?? null,
    invokedBy: snapshot.invokedBy ?? null,
    waitingOn: snapshot.waitingOn ? childView(snapshot.waitingOn) : null,
  };
}

/**
 * The approval a decision sent to this session's id decides: its own while one is pending, else the one the child
 * session it waits on (or that child's child) is pending on, else its own last one (to recognise a repeated decision).
 */
export function approvalToDecide(snapshot: SessionSnapshot): ApprovalRecord | undefined {
  if (snapshot.approval && !snapshot.approval.decision) return snapshot.approval;
  for (let child = snapshot.waitingOn; child; child = child.waitingOn) {
    if (child.approval && !child.approval.decision) return child.approval;
  }
  return snapshot.approval;
}

function pendingOf(approval: ApprovalRecord | undefined): PendingApproval | null {
  return approval && !approval.decision
    ? { approvalId: approval.id, state: approval.state, tool: approval.tool, args: approval.args, argsHash: approval.argsHash }
    : null;
}

function childView(child: ChildWait): ChildWaitView {
  return {
    sessionId: child.sessionId,
    machineId: child.machineId,
    state: child.state,
    status: child.status,
    pendingApproval: pendingOf(child.approval),
    error: child.error ?? null,
    waitingOn: child.waitingOn ? childView(child.waitingOn) : null,
  };
}
