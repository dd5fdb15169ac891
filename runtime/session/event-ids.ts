import { EVENT_IDS_KEPT, MAX_EVENT_ID_LENGTH } from '../constants.ts';
import type { RuntimeEvent } from '../events.ts';
import type { EventIdRecord, SessionStatus } from '../store/types.ts';
import { argsHash } from './approvals.ts';
import type { Refusal } from './refusal.ts';
import type { SendResult } from './types.ts';

const EVENT_ID = new RegExp(`^[\\x21-\\x7e]{1,${MAX_EVENT_ID_LENGTH}}$`);

/** Why an event id cannot be used, or undefined when it can (1-128 printable ASCII characters, no spaces). */
export function checkEventId(eventId: string): Refusal | undefined {
  if (typeof eventId === 'string' && EVENT_ID.test(eventId)) return undefined;
  return {
    code: 'INVALID_EVENT_ID',
    message: `an event id (Idempotency-Key) is 1-${MAX_EVENT_ID_LENGTH} printable ASCII characters without spaces; got ${JSON.stringify(String(eventId).slice(0, 40))}`,
  };
}

/**
 * The event ids a session remembers, oldest first, at most EVENT_IDS_KEPT. The run writes them with its record, so an
 * id is stored by the very commit that logs the first events of its event's application.
 */
export class EventIds {
  private entries: readonly EventIdRecord[];

  constructor(stored: readonly EventIdRecord[] | undefined) {
    this.entries = stored ?? [];
  }

  /** What the next record holds (undefined when no id was ever sent). */
  get list(): readonly EventIdRecord[] | undefined {
    return this.entries.length > 0 ? this.entries : undefined;
  }

  find(id: string): EventIdRecord | undefined {
    return this.entries.find((entry) => entry.id === id);
  }

  /** An event is about to be applied under `id`; its first log entry will have `seq`. */
  begin(id: string, hash: string, seq: number): void {
    this.entries = [...this.entries.filter((entry) => entry.id !== id), { id, hash, seq }].slice(-EVENT_IDS_KEPT);
  }

  /** Records how the event sent under `id` ended. */
  settle(id: string, result: SendResult, lastSeq: number): void {
    const settled: EventIdRecord['result'] = result.applied
      ? { applied: true, state: result.state, status: result.status, lastSeq }
      : {
          applied: false,
          code: result.code,
          message: result.message,
          ...(result.details === undefined ? {} : { details: result.details }),
        };
    this.entries = this.entries.map((entry) => (entry.id === id ? { ...entry, result: settled } : entry));
  }
}

/** The hash an event id is checked against: the event's type and payload, keys in any order. */
export function eventHash(event: unknown): string {
  return argsHash(event).slice(0, 32);
}

/** What sending an event under an id needs of a session run. */
export interface IdempotentRun {
  readonly sessionId: string;
  readonly eventIds: EventIds;
  readonly status: SessionStatus;
  readonly stateValue: unknown;
  readonly seq: number;
  send(raw: unknown): Promise<SendResult>;
  /** Writes the record now (the settled id with it). */
  commitIds(): Promise<void>;
  readEvents(afterSeq: number, limit: number): Promise<readonly RuntimeEvent[]>;
}

/**
 * Sends `raw` unless `eventId` was sent before: then the first result is answered again (`duplicate`) with the events
 * its application logged, and nothing is applied; an id sent before with another event is refused with
 * IDEMPOTENCY_KEY_REUSED. Nothing is logged for a repeat or a reused id: neither is an event of the session.
 */
export async function sendOnce(run: IdempotentRun, raw: unknown, eventId: string, onApplied?: () => void): Promise<SendResult> {
  const hash = eventHash(raw);
  const seen = run.eventIds.find(eventId);
  if (seen) {
    if (seen.hash !== hash) {
      return {
        applied: false,
        code: 'IDEMPOTENCY_KEY_REUSED',
        message: `event id ${JSON.stringify(eventId)} was sent to session ${run.sessionId} with another event (logged from seq ${seen.seq}); it is not applied. Send a new event with a new id`,
        details: { eventId, seq: seen.seq },
      };
    }
    return repeated(run, seen);
  }
  run.eventIds.begin(eventId, hash, run.seq + 1);
  const result = await run.send(raw);
  run.eventIds.settle(eventId, result, run.seq);
  // What the caller logs about an applied event goes into the commit of its id.
  if (result.applied) onApplied?.();
  await run.commitIds();
  return result;
}

/** The first result of an event sent again under its id; one whose process died mid-send is read back from the log. */
async function repeated(run: IdempotentRun, seen: EventIdRecord): Promise<SendResult> {
  const result = seen.result;
  if (result && !result.applied) return { ...result };
  const lastSeq = result ? result.lastSeq : run.seq;
  const events = await run.readEvents(seen.seq - 1, Math.max(0, lastSeq - seen.seq + 1));
  const first = events[0];
  if (!result && first?.type === 'transition.rejected') {
    const data = first.data as { code?: unknown; reason?: unknown };
    return { applied: false, code: String(data.code), message: String(data.reason) };
  }
  return result
    ? { applied: true, duplicate: true, state: result.state, status: result.status, events }
    : { applied: true, duplicate: true, state: run.stateValue, status: run.status, events };
}
