/**
 * The session event log as every client reads it: one envelope for every event, the event types the runtime writes
 * and where a session stands. The SSE stream, `GET /sessions/:id/events` and session files all carry these.
 */
export const RUNTIME_EVENT_TYPES = [
  'session.started',
  'session.migrated',
  'state.changed',
  'transition.rejected',
  'tool.started',
  'tool.retry',
  'tool.progress',
  'tool.bind_overridden',
  'tool.completed',
  'tool.failed',
  'tool.unknown_outcome',
  'channel.sent',
  'channel.received',
  'channel.failed',
  'approval.requested',
  'approval.decided',
  'llm.started',
  'llm.completed',
  'llm.failed',
  'llm.retry',
  'agent.step',
  'conversation.summary_failed',
  'machine.started',
  'machine.waiting',
  'machine.done',
  'machine.failed',
  'message.delta',
  'message.complete',
  'error',
  'session.cancelled',
  'session.done',
] as const;

export type RuntimeEventType = (typeof RUNTIME_EVENT_TYPES)[number];

/** One entry of a session's append-only log; frozen once appended. */
export interface RuntimeEvent<TData = Record<string, unknown>> {
  /** Strictly increasing per session, from 1, without gaps (the SSE `id:`). */
  readonly seq: number;
  readonly sessionId: string;
  readonly traceId: string;
  /** Milliseconds since the epoch, from the runtime's clock. */
  readonly at: number;
  readonly type: RuntimeEventType;
  readonly data: Readonly<TData>;
}

/** Where a session stands. */
export type SessionStatus = 'running' | 'waiting' | 'done' | 'error' | 'cancelled' | 'needs_attention';

/** Every status, in the order a list of sessions shows them. */
export const SESSION_STATUSES: readonly SessionStatus[] = ['running', 'waiting', 'needs_attention', 'done', 'error', 'cancelled'];

/** Statuses after which a session takes no more events (its stream ends). */
export const FINISHED_STATUSES: ReadonlySet<SessionStatus> = new Set<SessionStatus>(['done', 'error', 'cancelled']);

/** Session ids in paths, bodies and files: no dots or slashes, so no path tricks reach a store key. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
