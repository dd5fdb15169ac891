/**
 * The session event log: one envelope for every event, and the event types the runtime writes.
 * This union is the wire protocol the studio inspector and SSE clients read.
 */
export const RUNTIME_EVENT_TYPES = [
  'session.started',
  'state.changed',
  'transition.rejected',
  'tool.started',
  'tool.retry',
  'tool.completed',
  'tool.failed',
  'tool.unknown_outcome',
  'approval.requested',
  'approval.decided',
  'llm.started',
  'llm.completed',
  'llm.failed',
  'agent.step',
  'message.delta',
  'message.complete',
  'error',
  'session.cancelled',
  'session.needs_attention',
  'session.done',
] as const;

export type RuntimeEventType = (typeof RUNTIME_EVENT_TYPES)[number];

/** One entry of a session's append-only log; frozen once appended. */
export interface RuntimeEvent<TData = Record<string, unknown>> {
  /** Strictly increasing per session, from 1, without gaps. */
  readonly seq: number;
  readonly sessionId: string;
  readonly traceId: string;
  /** Milliseconds since the epoch, from the runtime's clock. */
  readonly at: number;
  readonly type: RuntimeEventType;
  readonly data: Readonly<TData>;
}

/** Freezes plain objects and arrays recursively (class instances are left alone). */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
