import type { WireEvent } from '../wire.ts';
import { historyError } from './errors.ts';

/** The `kind` of the first line of a session export. */
export const SESSION_FILE_KIND = 'flowing.session';
/** The export format version this studio reads. */
export const SESSION_FILE_VERSION = 1;
/** Larger files are refused before they are read (a 10,000-event session is a few MB). */
export const MAX_SESSION_FILE_BYTES = 64 * 1024 * 1024;

/** The first line of an export: what session of which machine, from which spec, and how many lines follow. */
export interface SessionFileHeader {
  kind: typeof SESSION_FILE_KIND;
  formatVersion: number;
  machineId: string;
  specHash: string;
  sessionId: string;
  exportedAt: number;
  /** Event lines that follow (files without the counts are read too). */
  events?: number;
  journal?: number;
}

/** A journal entry of the export (a tool or model call as the runtime recorded it outside the machine). */
export interface SessionFileJournalEntry {
  key: string;
  kind: 'tool' | 'llm';
  name: string;
  [key: string]: unknown;
}

/** A session read from an export: its header, its log in seq order and its journal. */
export interface SessionFile {
  header: SessionFileHeader;
  events: WireEvent[];
  journal: SessionFileJournalEntry[];
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

function parseLine(line: string, lineNo: number, isLast: boolean): unknown {
  try {
    return JSON.parse(line);
  } catch {
    // A cut-off download or copy ends in half a line; damage elsewhere is a different problem.
    if (isLast) throw historyError('INSPECT_FILE_TRUNCATED', `line ${lineNo} (the last) is cut off in the middle`, { line: lineNo });
    throw historyError('INSPECT_FILE_NOT_JSON', `line ${lineNo} is not JSON`, { line: lineNo });
  }
}

/**
 * The first line as JSON. A file whose first line is not JSON but which is one JSON document as a whole (a flow
 * spec, a pretty-printed export) is a file of another kind, not a damaged one.
 */
function firstLine(text: string, lines: readonly string[]): unknown {
  try {
    return parseLine(lines[0]!, 1, lines.length === 1);
  } catch (error) {
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch {
      throw error;
    }
    const kind = isObject(whole) && whole.kind === SESSION_FILE_KIND ? 'a session export written on several lines' : 'one JSON document (a flow spec?)';
    throw historyError('INSPECT_FILE_WRONG_KIND', `the file is ${kind}, not a session export (one JSON value per line)`, { line: 1 });
  }
}

function readHeader(value: unknown): SessionFileHeader {
  if (!isObject(value) || value.kind !== SESSION_FILE_KIND) {
    const kind = isObject(value) && typeof value.kind === 'string' ? JSON.stringify(value.kind.slice(0, 60)) : 'none';
    throw historyError('INSPECT_FILE_WRONG_KIND', `line 1 has kind ${kind}, not "${SESSION_FILE_KIND}"`, { line: 1 });
  }
  if (value.formatVersion !== SESSION_FILE_VERSION) {
    throw historyError('INSPECT_FILE_VERSION', `line 1 has formatVersion ${JSON.stringify(value.formatVersion)}; this studio reads ${SESSION_FILE_VERSION}`, { line: 1 });
  }
  for (const field of ['machineId', 'specHash', 'sessionId'] as const) {
    if (typeof value[field] !== 'string' || value[field] === '') {
      throw historyError('INSPECT_FILE_WRONG_KIND', `line 1 has no ${field}`, { line: 1, field });
    }
  }
  const counts: Pick<SessionFileHeader, 'events' | 'journal'> = {};
  for (const field of ['events', 'journal'] as const) {
    const counted = value[field];
    if (counted === undefined) continue;
    if (!Number.isSafeInteger(counted) || (counted as number) < 0) {
      throw historyError('INSPECT_FILE_WRONG_KIND', `line 1 has ${field}: ${JSON.stringify(counted)}, not a count`, { line: 1, field });
    }
    counts[field] = counted as number;
  }
  return {
    kind: SESSION_FILE_KIND, formatVersion: SESSION_FILE_VERSION, machineId: value.machineId as string, specHash: value.specHash as string,
    sessionId: value.sessionId as string, exportedAt: typeof value.exportedAt === 'number' ? value.exportedAt : 0, ...counts,
  };
}

/** A journal line is `{ "journal": entry }` (the runtime's export writes events bare, journal entries wrapped). */
function journalEntryOf(value: Record<string, unknown>): SessionFileJournalEntry | undefined {
  const entry = value.journal;
  if (!isObject(entry) || 'seq' in value) return undefined;
  return typeof entry.key === 'string' && (entry.kind === 'tool' || entry.kind === 'llm') ? (entry as SessionFileJournalEntry) : undefined;
}

function readEvent(value: Record<string, unknown>, lineNo: number, sessionId: string): WireEvent {
  const event = isObject(value.event) && !('seq' in value) ? value.event : value;
  const { seq, type, at, data } = event;
  if (!Number.isSafeInteger(seq) || (seq as number) < 1 || typeof type !== 'string' || typeof at !== 'number' || !isObject(data)) {
    throw historyError('INSPECT_FILE_BAD_EVENT', `line ${lineNo} is neither an event ({ seq, type, at, data }) nor a journal entry`, { line: lineNo });
  }
  return {
    seq: seq as number, type, at, data,
    sessionId: typeof event.sessionId === 'string' ? event.sessionId : sessionId,
    traceId: typeof event.traceId === 'string' ? event.traceId : '',
  };
}

/**
 * Reads a session export (JSON lines: a header, then one event per line, then `{ "journal": entry }` lines). Throws a HistoryError
 * naming the line: INSPECT_FILE_EMPTY, INSPECT_FILE_NOT_JSON, INSPECT_FILE_WRONG_KIND, INSPECT_FILE_VERSION,
 * INSPECT_FILE_BAD_EVENT, or INSPECT_FILE_TRUNCATED when the file ends early (a cut-off line, a log with a gap or
 * missing its start, fewer events than the header counts).
 * @example const { header, events } = parseSessionFile(await file.text());
 */
export function parseSessionFile(text: string): SessionFile {
  if (text.length > MAX_SESSION_FILE_BYTES) {
    throw historyError('INSPECT_FILE_TOO_LARGE', `the file has ${text.length} characters; the limit is ${MAX_SESSION_FILE_BYTES}`);
  }
  const lines = text.split('\n');
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (lines.length === 0) throw historyError('INSPECT_FILE_EMPTY', 'the file has no lines');
  const header = readHeader(firstLine(text, lines));
  const events: WireEvent[] = [];
  const journal: SessionFileJournalEntry[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const value = parseLine(line, i + 1, i === lines.length - 1);
    if (!isObject(value)) throw historyError('INSPECT_FILE_BAD_EVENT', `line ${i + 1} is not an object`, { line: i + 1 });
    const entry = journalEntryOf(value);
    if (entry) {
      journal.push(entry);
      continue;
    }
    const event = readEvent(value, i + 1, header.sessionId);
    const expected = events.length + 1;
    if (event.seq !== expected) {
      throw historyError('INSPECT_FILE_TRUNCATED', `line ${i + 1} holds event seq ${event.seq} where seq ${expected} belongs; events are missing`, { line: i + 1, seq: event.seq, expected });
    }
    events.push(event);
  }
  if (events.length === 0) throw historyError('INSPECT_FILE_TRUNCATED', 'the file has a header and no events');
  if (events[0]!.type !== 'session.started') {
    throw historyError('INSPECT_FILE_BAD_EVENT', `the first event is ${JSON.stringify(events[0]!.type)}, not session.started`, { seq: 1 });
  }
  // The header counts the lines that follow, so a file cut exactly at a line end is caught too.
  for (const [field, found] of [['events', events.length], ['journal', journal.length]] as const) {
    const counted = header[field];
    if (typeof counted === 'number' && counted !== found) {
      throw historyError('INSPECT_FILE_TRUNCATED', `the header counts ${counted} ${field === 'events' ? 'events' : 'journal entries'} and the file holds ${found}`, { field, expected: counted, found });
    }
  }
  return { header, events, journal };
}
