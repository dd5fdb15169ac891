import type { XStateRecord } from '@flowing/protocol';
import type { InspectionEvent } from 'xstate';
import type { InspectionSource } from '../session/host.ts';
import { microstepTransitions } from '../xstate-adapter.ts';

export type { XStateRecord };

export interface XStateTraceOptions {
  /** Records kept per session, the oldest dropped first (default 2,000). */
  perSession?: number;
  /** Sessions kept, the least recently active dropped first (default 200). */
  sessions?: number;
}

export interface XStateTrace {
  /** Pass as `createRuntime({ inspect: trace.inspect })`. */
  inspect(event: InspectionEvent, source: InspectionSource): void;
  /** The kept records of a session (all, or those after event `afterSeq`), oldest first; [] when none are kept. */
  read(sessionId: string, options?: { afterSeq?: number }): XStateRecord[];
  /** How many records of the session were dropped for the limit (the first kept one is `dropped + 1`). */
  dropped(sessionId: string): number;
}

/** A value as JSON, or a note that it is not (functions, cycles, class instances with no toJSON). */
function plain(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return '[not serialisable]';
  }
}

function toRecord(event: InspectionEvent, index: number, afterSeq: number): XStateRecord {
  const ref = event.actorRef as unknown as { id: string; sessionId: string };
  const record: XStateRecord = {
    index,
    afterSeq,
    type: event.type,
    actor: { id: ref.id, systemSessionId: ref.sessionId, root: ref.sessionId === event.rootId },
  };
  switch (event.type) {
    case '@xstate.event': {
      const from = (event.sourceRef as { id?: string } | undefined)?.id;
      record.event = { type: event.event.type, ...(from !== undefined ? { from } : {}) };
      break;
    }
    case '@xstate.microstep':
      record.event = { type: event.event.type };
      record.transitions = microstepTransitions(event);
      break;
    case '@xstate.snapshot': {
      const snapshot = event.snapshot as { status: string; value?: unknown; context?: unknown };
      record.event = { type: event.event.type };
      record.snapshot = record.actor.root
        ? { status: snapshot.status, value: plain(snapshot.value), context: plain(snapshot.context) }
        : { status: snapshot.status };
      break;
    }
    case '@xstate.action':
      record.action = { type: event.action.type };
      break;
    default:
      break;
  }
  return record;
}

interface SessionTrace {
  records: XStateRecord[];
  next: number;
}

/**
 * Keeps XState's inspection events per session in memory, bounded, as JSON records: what the runtime server's
 * `GET /sessions/:id/xstate` answers and the studio shows in an event's details. Records exist only for what this
 * process ran since it started (they are not stored with the session).
 * @example const trace = createXStateTrace(); const runtime = createRuntime({ machines, inspect: trace.inspect });
 */
export function createXStateTrace(options: XStateTraceOptions = {}): XStateTrace {
  const perSession = options.perSession ?? 2_000;
  const maxSessions = options.sessions ?? 200;
  const traces = new Map<string, SessionTrace>();
  return {
    inspect(event, source) {
      let trace = traces.get(source.sessionId);
      if (trace) traces.delete(source.sessionId); // re-inserted: the Map's order is the least recently active first
      trace ??= { records: [], next: 1 };
      traces.set(source.sessionId, trace);
      trace.records.push(toRecord(event, trace.next++, source.afterSeq));
      if (trace.records.length > perSession) trace.records.splice(0, trace.records.length - perSession);
      if (traces.size > maxSessions) traces.delete(traces.keys().next().value!);
    },
    read(sessionId, readOptions = {}) {
      const records = traces.get(sessionId)?.records ?? [];
      const after = readOptions.afterSeq;
      return after === undefined ? [...records] : records.filter((r) => r.afterSeq >= after);
    },
    dropped(sessionId) {
      const trace = traces.get(sessionId);
      return trace ? trace.next - 1 - trace.records.length : 0;
    },
  };
}
