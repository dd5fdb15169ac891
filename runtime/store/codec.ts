import { hash } from 'node:crypto';
import { freezeEvent, type RuntimeEvent } from '../events.ts';
import { storeError } from './errors.ts';
import type { JournalEntry, SessionRecord } from './types.ts';

/** Hex digits of the SHA-1 kept beside each stored body: enough to catch a flipped byte, short enough to be cheap. */
const CHECK_LENGTH = 16;

/** A value as stored: its JSON and a checksum of that JSON. */
export interface Stored {
  body: string;
  check: string;
}

export function encode(value: unknown): Stored {
  const body = JSON.stringify(value);
  return { body, check: checksum(body) };
}

/** One string holding checksum and JSON, for stores with a single value per entry (Redis). */
export function encodeSealed(value: unknown): string {
  const { body, check } = encode(value);
  return check + body;
}

function checksum(body: string): string {
  return hash('sha1', body, 'hex').slice(0, CHECK_LENGTH);
}

/** Parses a stored body after checking its checksum; anything else is `FLOW_STORE_CORRUPT` naming the session. */
function decode(body: unknown, check: unknown, what: string, sessionId: string, seq?: number): unknown {
  if (typeof body !== 'string' || typeof check !== 'string' || checksum(body) !== check) {
    throw corrupt(`${what} of session '${sessionId}' fails its checksum`, sessionId, undefined, seq);
  }
  try {
    return JSON.parse(body);
  } catch (cause) {
    throw corrupt(`${what} of session '${sessionId}' is not valid JSON`, sessionId, cause, seq);
  }
}

function unseal(sealed: unknown, what: string, sessionId: string, seq?: number): unknown {
  if (typeof sealed !== 'string' || sealed.length < CHECK_LENGTH)
    throw corrupt(`${what} of session '${sessionId}' is truncated`, sessionId, undefined, seq);
  return decode(sealed.slice(CHECK_LENGTH), sealed.slice(0, CHECK_LENGTH), what, sessionId, seq);
}

/** FLOW_STORE_CORRUPT naming the session (`details.sessionId`) and, for an event, its seq (`details.seq`). */
function corrupt(message: string, sessionId: string, cause?: unknown, seq?: number) {
  return storeError(
    'FLOW_STORE_CORRUPT',
    `${message}; the session is refused (others are unaffected). Restore it from a backup or delete it.`,
    { sessionId, cause, ...(seq === undefined ? {} : { seq }) },
  );
}

/** A stored record, checked: its checksum, its JSON and the fields the runtime relies on. */
export function decodeRecord(body: unknown, check: unknown, sessionId: string): SessionRecord {
  return checkRecord(decode(body, check, 'the record', sessionId), sessionId);
}

export function unsealRecord(sealed: unknown, sessionId: string): SessionRecord {
  return checkRecord(unseal(sealed, 'the record', sessionId), sessionId);
}

function checkRecord(value: unknown, sessionId: string): SessionRecord {
  const r = value as Partial<SessionRecord> | null;
  const ok =
    r !== null &&
    typeof r === 'object' &&
    r.sessionId === sessionId &&
    typeof r.machineId === 'string' &&
    typeof r.status === 'string' &&
    Number.isInteger(r.version) &&
    Number.isInteger(r.seq) &&
    Number.isInteger(r.step) &&
    typeof r.usage === 'object' &&
    r.usage !== null;
  if (!ok) throw corrupt(`the record of session '${sessionId}' lacks required fields`, sessionId);
  return r as SessionRecord;
}

/** A stored event, checked and frozen like the events the runtime appends. */
export function decodeEvent(body: unknown, check: unknown, sessionId: string, seq: number): RuntimeEvent {
  return checkEvent(decode(body, check, `event ${seq}`, sessionId, seq), sessionId, seq);
}

export function unsealEvent(sealed: unknown, sessionId: string, seq: number): RuntimeEvent {
  return checkEvent(unseal(sealed, `event ${seq}`, sessionId, seq), sessionId, seq);
}

function checkEvent(value: unknown, sessionId: string, seq: number): RuntimeEvent {
  const e = value as Partial<RuntimeEvent> | null;
  if (
    e === null ||
    typeof e !== 'object' ||
    e.seq !== seq ||
    e.sessionId !== sessionId ||
    typeof e.type !== 'string' ||
    typeof e.data !== 'object' ||
    e.data === null
  ) {
    throw corrupt(`event ${seq} of session '${sessionId}' does not match its position in the log`, sessionId, undefined, seq);
  }
  return freezeEvent(e as RuntimeEvent & { data: object });
}

export function decodeJournal(body: unknown, check: unknown, sessionId: string, key: string): JournalEntry {
  return checkJournal(decode(body, check, `journal entry '${key}'`, sessionId), sessionId, key);
}

export function unsealJournal(sealed: unknown, sessionId: string, key: string): JournalEntry {
  return checkJournal(unseal(sealed, `journal entry '${key}'`, sessionId), sessionId, key);
}

function checkJournal(value: unknown, sessionId: string, key: string): JournalEntry {
  const j = value as Partial<JournalEntry> | null;
  if (
    j === null ||
    typeof j !== 'object' ||
    j.key !== key ||
    (j.kind !== 'tool' && j.kind !== 'llm' && j.kind !== 'machine') ||
    typeof j.name !== 'string'
  ) {
    throw corrupt(`journal entry '${key}' of session '${sessionId}' lacks required fields`, sessionId);
  }
  return j as JournalEntry;
}
