import { z } from 'zod';
import { jsonNestingDepth } from '@flowing/spec';
import { FlowingError, type FlowError } from './errors/flowing-error.ts';
import { RUNTIME_EVENT_TYPES, SESSION_ID_PATTERN, type RuntimeEvent } from './events.ts';

export const SESSION_FILE_KIND = 'flowing.session';
export const SESSION_FILE_FORMAT_VERSION = 1;
/**
 * Longest file read, in characters (UTF-16 code units, what `text.length` counts): a 10,000-event session is a few
 * million. The runtime, the studio server and the studio app refuse larger files with this one limit.
 */
export const MAX_SESSION_FILE_CHARS = 64 * 1024 * 1024;
/** Longest line read (one event with a large tool output still fits; a hostile giant line is refused before parsing). */
export const MAX_SESSION_FILE_LINE_CHARS = 4 * 1024 * 1024;
/** Deepest JSON nesting accepted in one line (JSON.parse recurses; a context is far shallower). */
export const MAX_SESSION_FILE_DEPTH = 100;

/** Line 1 of a session file. `events` and `journal` count the lines that follow, so a file cut at a line end is caught. */
export interface SessionFileHeader {
  kind: typeof SESSION_FILE_KIND;
  formatVersion: typeof SESSION_FILE_FORMAT_VERSION;
  machineId: string;
  specHash: string;
  sessionId: string;
  exportedAt: number;
  events: number;
  journal: number;
}

/** A tool or model call as the runtime journaled it outside the machine (the store's `JournalEntry`). */
export interface JournalEntry {
  /** `<invoke id>@<step>` (agent tool calls add `/<n>`); stable across resumes. */
  key: string;
  kind: 'tool' | 'llm' | 'machine';
  name: string;
  idempotent: boolean;
  startedAt: number;
  completed?: { at: number; ok: true; output: unknown } | { at: number; ok: false; error: FlowError };
}

/** A parsed session file: its header, the log (seq 1 to N, contiguous, from session.started) and the journal. */
export interface SessionFile {
  header: SessionFileHeader;
  events: RuntimeEvent[];
  journal: JournalEntry[];
}

/**
 * Why a file was refused (`details.reason` of SESSION_FILE_INVALID). `truncated` is a file that ends early: its last
 * line is cut off, or the header counts more lines than follow, or nothing follows it.
 */
export type SessionFileRefusal =
  | 'not_text'
  | 'file_too_large'
  | 'empty'
  | 'not_json'
  | 'line_too_long'
  | 'too_deep'
  | 'forbidden_key'
  | 'wrong_kind'
  | 'wrong_version'
  | 'bad_header'
  | 'bad_event'
  | 'bad_journal'
  | 'out_of_order'
  | 'seq_gap'
  | 'other_session'
  | 'truncated';

/** What SESSION_FILE_INVALID carries: the line (1 is the header; 0 the file as a whole) and the reason. */
export interface SessionFileProblem {
  line: number;
  reason: SessionFileRefusal;
}

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const Header = z.strictObject({
  kind: z.literal(SESSION_FILE_KIND),
  formatVersion: z.literal(SESSION_FILE_FORMAT_VERSION),
  machineId: z.string().min(1).max(200),
  specHash: z.string().min(1).max(200),
  sessionId: z.string().regex(SESSION_ID_PATTERN, 'a session id is 1-128 characters of A-Z a-z 0-9 _ -'),
  exportedAt: z.number(),
  events: count,
  journal: count,
});

const EventLine = z.strictObject({
  seq: z.number().int().min(1),
  sessionId: z.string(),
  traceId: z.string().max(200),
  at: z.number(),
  type: z.enum(RUNTIME_EVENT_TYPES),
  data: z.record(z.string(), z.unknown()),
});

const FlowErrorShape = z.strictObject({ code: z.string().max(200), message: z.string(), details: z.unknown().optional() });

const JournalLine = z.strictObject({
  journal: z.strictObject({
    key: z.string().min(1).max(400),
    kind: z.enum(['tool', 'llm', 'machine']),
    name: z.string().min(1).max(200),
    idempotent: z.boolean(),
    startedAt: z.number(),
    completed: z
      .union([
        z.strictObject({ at: z.number(), ok: z.literal(true), output: z.unknown() }),
        z.strictObject({ at: z.number(), ok: z.literal(false), error: FlowErrorShape }),
      ])
      .optional(),
  }),
});

function invalid(line: number, reason: SessionFileRefusal, message: string): FlowingError<'SESSION_FILE_INVALID'> {
  const details: SessionFileProblem = { line, reason };
  return new FlowingError('SESSION_FILE_INVALID', `line ${line}: ${message}`, { details });
}

class ForbiddenKey extends Error {}

/** One line as JSON; a line that does not parse is `not_json`, or `truncated` when it is the last (a cut-off copy). */
function parseLine(text: string, line: number, isLast: boolean): unknown {
  if (text.length > MAX_SESSION_FILE_LINE_CHARS)
    throw invalid(
      line,
      'line_too_long',
      `the line has ${text.length} characters, more than the ${MAX_SESSION_FILE_LINE_CHARS} a session file line may have`,
    );
  if (jsonNestingDepth(text, MAX_SESSION_FILE_DEPTH) > MAX_SESSION_FILE_DEPTH)
    throw invalid(line, 'too_deep', `the JSON is nested deeper than ${MAX_SESSION_FILE_DEPTH} levels`);
  try {
    // A `__proto__` key (also written as \u005f_proto__) would become a prototype the moment anyone copies the
    // object with a spread or assign: refused outright, not stripped. Only a line that spells it, or has escapes,
    // can hold one; the others skip the (slower) reviver.
    if (!text.includes('__proto__') && !text.includes('\\u')) return JSON.parse(text);
    return JSON.parse(text, (key, value: unknown) => {
      if (key === '__proto__') throw new ForbiddenKey();
      return value;
    });
  } catch (error) {
    if (error instanceof ForbiddenKey) throw invalid(line, 'forbidden_key', 'the JSON has a "__proto__" key');
    const why = (error as Error).message.slice(0, 120);
    if (isLast) throw invalid(line, 'truncated', `the last line is cut off in the middle (${why})`);
    throw invalid(line, 'not_json', `not JSON (${why})`);
  }
}

/**
 * Why line 1 did not parse, told better when the whole file is one JSON document (a flow spec, an export
 * pretty-printed by an editor): a file of another kind, not a damaged one.
 */
function firstLineRefusal(error: unknown, whole: string): unknown {
  if (jsonNestingDepth(whole, MAX_SESSION_FILE_DEPTH) > MAX_SESSION_FILE_DEPTH) return error;
  let value: unknown;
  try {
    value = JSON.parse(whole);
  } catch {
    return error;
  }
  const what =
    (value as { kind?: unknown } | null)?.kind === SESSION_FILE_KIND
      ? 'a session export written on several lines'
      : 'one JSON document (a flow spec?)';
  return invalid(1, 'wrong_kind', `the file is ${what}, not a session export (one JSON value per line)`);
}

function issuesOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(line)'}: ${i.message}`)
    .join('; ');
}

function readHeader(first: unknown): SessionFileHeader {
  const kind = (first as { kind?: unknown } | null)?.kind;
  if (kind !== SESSION_FILE_KIND)
    throw invalid(
      1,
      'wrong_kind',
      `the header's kind is ${JSON.stringify(kind)?.slice(0, 60) ?? 'missing'}, not "${SESSION_FILE_KIND}": this is not a Flowing session export`,
    );
  const version = (first as { formatVersion?: unknown }).formatVersion;
  if (version !== SESSION_FILE_FORMAT_VERSION) {
    throw invalid(
      1,
      'wrong_version',
      `format version ${JSON.stringify(version)?.slice(0, 30) ?? 'missing'} is not ${SESSION_FILE_FORMAT_VERSION}, the one this Flowing reads`,
    );
  }
  const header = Header.safeParse(first);
  if (!header.success) throw invalid(1, 'bad_header', `the header is malformed: ${issuesOf(header.error)}`);
  return header.data;
}

const stripCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);

/**
 * Reads a session file written by the runtime's `exportSession` (`GET /sessions/:id/export`), refusing anything else
 * with a `FlowingError` SESSION_FILE_INVALID whose `details` (`SessionFileProblem`) name the line and the reason: a
 * file over MAX_SESSION_FILE_CHARS, a wrong kind or format version, a line that is not JSON, too long or too deep, a
 * `__proto__` key, an event out of seq order or of another session, an unknown event type, a file cut short.
 * Whether the machine's spec changed since is the opener's question: see `sessionFileSpecNotice`.
 * @example
 * const file = parseSessionFile(await readFile(path, 'utf8'));
 * sessionAt(file.events, 3);
 */
export function parseSessionFile(text: string): SessionFile {
  if (typeof text !== 'string') throw invalid(0, 'not_text', 'a session file is text');
  const reader = createSessionFileReader();
  reader.push(text);
  return reader.end();
}

/** A session file read a piece at a time (`parseSessionFile` in pieces): push the text as it comes, then `end`. */
export interface SessionFileReader {
  /** Takes the next piece of text (any length, cut anywhere); throws SESSION_FILE_INVALID as soon as a line is refused. */
  push(text: string): void;
  /** The file, once all of it was pushed; throws SESSION_FILE_INVALID for what only the end shows (a cut-off file). */
  end(): SessionFile;
}

/**
 * Reads a session file piece by piece with the checks of `parseSessionFile`, holding the parsed lines and the one
 * line not yet complete instead of the whole text: a browser reads a large export from `File.stream()` with it.
 * @example
 * const reader = createSessionFileReader();
 * const decoder = new TextDecoder();
 * for await (const bytes of file.stream()) reader.push(decoder.decode(bytes, { stream: true }));
 * const { header, events } = reader.end();
 */
export function createSessionFileReader(): SessionFileReader {
  let chars = 0;
  let partial = '';
  let lineNo = 0;
  /** The last non-blank line, parsed once the next one shows it is not the last; blank lines seen after it. */
  let held: { text: string; line: number } | undefined;
  let blanksAfterHeld: number[] = [];
  /** Line 1 did not parse and more lines follow: the text is kept to tell a JSON document from a damaged file. */
  let firstFailed: { error: unknown; text: string } | undefined;
  /** The raw text up to the line being read, until line 1 has parsed. */
  let prefix: string | undefined = '';
  let header: SessionFileHeader | undefined;
  const events: RuntimeEvent[] = [];
  const journal: JournalEntry[] = [];

  function take(text: string, line: number, isLast: boolean) {
    if (line === 1) {
      let first: unknown;
      try {
        first = parseLine(text, 1, isLast);
      } catch (error) {
        if (isLast) throw error;
        firstFailed = { error, text: prefix ?? text };
        prefix = undefined;
        return;
      }
      prefix = undefined;
      header = readHeader(first);
      return;
    }
    const value = parseLine(text, line, isLast);
    if (value !== null && typeof value === 'object' && 'journal' in value) {
      const entry = JournalLine.safeParse(value);
      if (!entry.success) throw invalid(line, 'bad_journal', `a malformed journal entry: ${issuesOf(entry.error)}`);
      journal.push(entry.data.journal as JournalEntry);
      return;
    }
    if (journal.length > 0) throw invalid(line, 'out_of_order', 'an event after the journal entries (events come first)');
    const event = EventLine.safeParse(value);
    if (!event.success) throw invalid(line, 'bad_event', `a malformed event: ${issuesOf(event.error)}`);
    const expected = events.length + 1;
    if (event.data.seq !== expected)
      throw invalid(line, 'seq_gap', `event seq ${event.data.seq} where seq ${expected} was expected: events are missing`);
    if (event.data.sessionId !== header!.sessionId)
      throw invalid(
        line,
        'other_session',
        `an event of session ${JSON.stringify(event.data.sessionId.slice(0, 130))}, not of ${header!.sessionId}`,
      );
    events.push(event.data);
  }

  function line(raw: string) {
    lineNo++;
    if (firstFailed) {
      firstFailed.text += `\n${raw}`;
      return;
    }
    if (prefix !== undefined) prefix += lineNo === 1 ? raw : `\n${raw}`;
    const text = stripCr(raw);
    // Line 1 is always a line (the header, or what the file is instead); blank lines elsewhere wait for what follows.
    if (text.trim() === '' && lineNo !== 1) {
      blanksAfterHeld.push(lineNo);
      return;
    }
    if (held) take(held.text, held.line, false);
    // A blank line in the middle is refused as parseLine refuses it; blank lines at the end are not lines.
    if (blanksAfterHeld.length > 0 && !firstFailed) take('', blanksAfterHeld[0]!, false);
    blanksAfterHeld = [];
    if (!firstFailed) held = { text, line: lineNo };
  }

  return {
    push(text) {
      chars += text.length;
      if (chars > MAX_SESSION_FILE_CHARS)
        throw invalid(0, 'file_too_large', `the file has ${chars} characters, more than the ${MAX_SESSION_FILE_CHARS} read`);
      let from = 0;
      for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', from)) {
        line(partial + text.slice(from, at));
        partial = '';
        from = at + 1;
      }
      partial += text.slice(from);
      // Refused before the rest of the line arrives (a blank one is padding, as at the end of a file).
      if (partial.length > MAX_SESSION_FILE_LINE_CHARS + 1 && !firstFailed && partial.trim() !== '')
        throw invalid(
          lineNo + 1,
          'line_too_long',
          `the line has more than ${MAX_SESSION_FILE_LINE_CHARS} characters, the most a session file line may have`,
        );
    },
    end() {
      if (partial !== '') {
        line(partial);
        partial = '';
      }
      if (firstFailed) throw firstLineRefusal(firstFailed.error, firstFailed.text);
      if (!held || (held.line === 1 && held.text.trim() === '')) throw invalid(1, 'empty', 'the file is empty');
      take(held.text, held.line, true);
      if (!header) throw invalid(1, 'empty', 'the file is empty');
      if (events.length !== header.events || journal.length !== header.journal) {
        throw invalid(
          held.line + 1,
          'truncated',
          `the header promises ${header.events} events and ${header.journal} journal entries, the file has ${events.length} and ${journal.length}: it was cut short or edited`,
        );
      }
      if (events.length === 0)
        throw invalid(2, 'truncated', 'the file has a header and no events (a session log starts with session.started)');
      if (events[0]!.type !== 'session.started')
        throw invalid(2, 'bad_event', `the log starts with ${events[0]!.type}, not session.started`);
      return { header, events, journal };
    },
  };
}

/**
 * What an opener tells the user when the machine it has now is not the one the file was recorded with: a SPEC_CHANGED
 * notice (the recorded events are still shown as recorded; drawing them on the new graph may mislead). Null when the
 * hashes agree.
 */
export function sessionFileSpecNotice(
  header: Pick<SessionFileHeader, 'machineId' | 'specHash'>,
  currentSpecHash: string | undefined,
): FlowError<'SPEC_CHANGED'> | null {
  if (currentSpecHash === header.specHash) return null;
  if (currentSpecHash === undefined)
    return { code: 'SPEC_CHANGED', message: `machine '${header.machineId}' is not known here; the session is shown from its events alone` };
  return {
    code: 'SPEC_CHANGED',
    message: `the session was recorded with another version of '${header.machineId}' (spec hash ${header.specHash.slice(0, 12)}, now ${currentSpecHash.slice(0, 12)}): states and transitions may not match the graph`,
  };
}
