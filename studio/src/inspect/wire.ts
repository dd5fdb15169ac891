/**
 * The runtime's wire protocol as the studio reads it (the studio never imports the runtime; these types mirror
 * runtime/events.ts and runtime/server/session-view.ts and are checked against real answers by the e2e tests).
 */

/** Event types the runtime writes to a session's log. */
export type WireEventType =
  | 'session.started' | 'state.changed' | 'transition.rejected'
  | 'tool.started' | 'tool.retry' | 'tool.completed' | 'tool.failed' | 'tool.unknown_outcome'
  | 'approval.requested' | 'approval.decided'
  | 'llm.started' | 'llm.completed' | 'llm.failed' | 'agent.step'
  | 'message.delta' | 'message.complete'
  | 'error' | 'session.cancelled' | 'session.done';

/** One entry of a session's log: `seq` is strictly increasing from 1 without gaps (the SSE `id:`). */
export interface WireEvent {
  seq: number;
  sessionId: string;
  traceId: string;
  /** Milliseconds since the epoch, from the runtime's clock. */
  at: number;
  type: WireEventType | (string & {});
  data: Record<string, unknown>;
}

/** Where a session stands. */
export type SessionStatus = 'running' | 'waiting' | 'done' | 'error' | 'cancelled' | 'needs_attention';

export const SESSION_STATUSES: readonly SessionStatus[] = ['running', 'waiting', 'needs_attention', 'done', 'error', 'cancelled'];

/** One line of `GET /sessions`. */
export interface SessionSummary {
  sessionId: string;
  machineId: string;
  status: SessionStatus;
  version: number;
  seq: number;
  createdAt: number;
  updatedAt: number;
  awaitingApproval: boolean;
}

/** The answer of `GET /sessions/:id`. */
export interface SessionView {
  sessionId: string;
  machineId: string;
  traceId: string;
  status: SessionStatus;
  state: unknown;
  activeStates: string[];
  context: unknown;
  pendingApproval: { approvalId: string; state: string; tool: string; args: unknown; argsHash: string } | null;
  seq: number;
  step: number;
  error: { code: string; message: string } | null;
}

/** One machine of `GET /machines`. */
export interface RuntimeMachine {
  id: string;
  specHash: string;
  events: string[];
  spec: unknown;
}

/** Dotted paths of the active leaf states of an XState state value (`active.idle`; several in parallel regions). */
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
