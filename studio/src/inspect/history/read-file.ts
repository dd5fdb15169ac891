import {
  createSessionFileReader,
  FlowingError,
  parseSessionFile,
  type SessionFile,
  type SessionFileProblem,
  type SessionFileRefusal,
} from '@flowing/protocol';
import { historyError, type HistoryErrorCode } from './errors.ts';

/**
 * The code the inspector shows for each reason the session-file parser (@flowing/protocol) refuses a file: what the
 * person can do about it, not how the parser found it.
 */
export const FILE_REFUSAL_CODES = {
  not_text: 'INSPECT_FILE_NOT_JSON',
  file_too_large: 'INSPECT_FILE_TOO_LARGE',
  empty: 'INSPECT_FILE_EMPTY',
  not_json: 'INSPECT_FILE_NOT_JSON',
  line_too_long: 'INSPECT_FILE_BAD_EVENT',
  too_deep: 'INSPECT_FILE_BAD_EVENT',
  forbidden_key: 'INSPECT_FILE_BAD_EVENT',
  wrong_kind: 'INSPECT_FILE_WRONG_KIND',
  wrong_version: 'INSPECT_FILE_VERSION',
  bad_header: 'INSPECT_FILE_WRONG_KIND',
  bad_event: 'INSPECT_FILE_BAD_EVENT',
  bad_journal: 'INSPECT_FILE_BAD_EVENT',
  out_of_order: 'INSPECT_FILE_BAD_EVENT',
  seq_gap: 'INSPECT_FILE_TRUNCATED',
  other_session: 'INSPECT_FILE_BAD_EVENT',
  truncated: 'INSPECT_FILE_TRUNCATED',
} as const satisfies Record<SessionFileRefusal, HistoryErrorCode>;

/**
 * Reads a session file with the runtime's own parser; a refusal is a HistoryError with the code of FILE_REFUSAL_CODES,
 * the parser's message (it names the line) and the advice of that code.
 * @example const { header, events } = readSessionFile(await file.text());
 */
export function readSessionFile(text: string): SessionFile {
  try {
    return parseSessionFile(text);
  } catch (error) {
    throw asHistoryError(error);
  }
}

/**
 * Reads a session file as it streams in (a picked file's `stream()`, a response body), piece by piece with the same
 * parser: the text is never held whole, only what it parses to. Refusals are those of `readSessionFile`, as soon as
 * the line that causes one has arrived.
 * @example const { header, events } = await readSessionStream(file.stream());
 */
export async function readSessionStream(stream: ReadableStream<Uint8Array>): Promise<SessionFile> {
  const reader = createSessionFileReader();
  const decoder = new TextDecoder();
  const bytes = stream.getReader();
  try {
    for (let next = await bytes.read(); !next.done; next = await bytes.read()) reader.push(decoder.decode(next.value, { stream: true }));
    reader.push(decoder.decode());
    return reader.end();
  } catch (error) {
    await bytes.cancel().catch(() => {});
    throw asHistoryError(error);
  }
}

function asHistoryError(error: unknown): unknown {
  if (!(error instanceof FlowingError) || error.code !== 'SESSION_FILE_INVALID') return error;
  const problem = error.details as SessionFileProblem;
  return historyError(FILE_REFUSAL_CODES[problem.reason], error.message, { ...problem });
}
