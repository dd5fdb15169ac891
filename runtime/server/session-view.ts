import type { SessionSnapshot } from '../runtime.ts';

/** What `GET /sessions/:id` answers: where the session stands, without its log. */
export interface SessionView {
  sessionId: string;
  machineId: string;
  traceId: string;
  status: SessionSnapshot['status'];
  /** The state value as XState keeps it (a string, or an object for compound and parallel states). */
  state: unknown;
  /** Dotted paths of the active leaf states (`active.idle`); several inside a parallel state. */
  activeStates: string[];
  context: unknown;
  /** The approval the session waits for, when it waits for one. */
  pendingApproval: { approvalId: string; state: string; tool: string; args: unknown; argsHash: string } | null;
  usage: SessionSnapshot['usage'];
  seq: number;
  step: number;
  error: { code: string; message: string } | null;
  /** A forked session's parent and the seq of the parent's event it was forked at; null for any other session. */
  parentId: string | null;
  forkedAt: number | null;
}

/** Dotted leaf paths of an XState state value. */
export function activeStatePaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix + value];
  if (value === null || typeof value !== 'object') return [];
  const paths: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const below = activeStatePaths(child, `${prefix}${key}.`);
    paths.push(...(below.length > 0 ? below : [prefix + key]));
  }
  return paths;
}

export function toSessionView(snapshot: SessionSnapshot): SessionView {
  const approval = snapshot.approval;
  return {
    sessionId: snapshot.sessionId,
    machineId: snapshot.machineId,
    traceId: snapshot.traceId,
    status: snapshot.status,
    state: snapshot.state,
    activeStates: activeStatePaths(snapshot.state),
    context: snapshot.context,
    pendingApproval: approval && !approval.decision
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
