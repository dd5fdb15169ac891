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

/**
 * Freezes an event: the envelope, its data and the plain objects and arrays directly inside the data. Deeper values
 * are contexts and outputs the machine already treats as immutable; walking them again for every event would cost
 * more than the whole rest of logging.
 */
export function freezeEvent<T extends object>(event: T & { data: object }): T {
  const data = event.data as Record<string, unknown>;
  for (const key in data) {
    const value = data[key];
    if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === Array.prototype) Object.freeze(value);
    }
  }
  Object.freeze(data);
  return Object.freeze(event);
}
