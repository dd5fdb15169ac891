import type { FlowError } from '../errors.ts';
import type { Refusal } from './refusal.ts';

/** Most damaged sessions remembered; the oldest is forgotten first (a read finds it again). */
const MAX_REMEMBERED = 10_000;

/**
 * Sessions whose stored log was found damaged (FLOW_STORE_CORRUPT) by a read of this runtime: a subscription, a
 * stream, `session.events()`. Events sent to them are refused instead of applied on top of a log nobody can read
 * whole; the refusal names the damaged event.
 */
export class DamagedSessions {
  private readonly byId = new Map<string, FlowError>();

  /** Remembers the session when `error` says its stored data is damaged. */
  note(sessionId: string, error: FlowError): void {
    if (error.code !== 'FLOW_STORE_CORRUPT') return;
    this.byId.delete(sessionId);
    this.byId.set(sessionId, error);
    if (this.byId.size > MAX_REMEMBERED) this.byId.delete(this.byId.keys().next().value!);
  }

  /** Why an event for the session is refused, when its log was found damaged. */
  refusal(sessionId: string): Refusal | undefined {
    const error = this.byId.get(sessionId);
    if (!error) return undefined;
    const seq = (error.details as { seq?: unknown } | undefined)?.seq;
    return {
      code: 'FLOW_STORE_CORRUPT',
      message: `session ${sessionId} is refused: its stored log is damaged${typeof seq === 'number' ? ` at event ${seq}` : ''} (${error.message})`,
      details: { sessionId, ...(typeof seq === 'number' ? { seq } : {}) },
    };
  }
}
