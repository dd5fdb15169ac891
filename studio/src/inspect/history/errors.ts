/** Stable codes for what the step-through, timeline, fork and offline files refuse, each with what to do next. */
export const HISTORY_ERROR_CODES = {
  INSPECT_FILE_EMPTY: 'The file is empty; export a session again.',
  INSPECT_FILE_TOO_LARGE: 'The file is larger than the studio opens; export a shorter session.',
  INSPECT_FILE_NOT_JSON: 'A line of the file is not JSON; it is not a Flowing session file or it was damaged.',
  INSPECT_FILE_WRONG_KIND: 'The first line is not a Flowing session header; open a file made by "Export".',
  INSPECT_FILE_VERSION: 'The file was written in a format version this studio does not read; update the studio.',
  INSPECT_FILE_TRUNCATED: 'The file ends in the middle of the session; export it again.',
  INSPECT_FILE_BAD_EVENT: 'A line of the file is not a session event or journal entry.',
  INSPECT_FILE_FETCH_FAILED: 'The file could not be fetched from the studio server; run flowing inspect again.',
  INSPECT_CONTEXT_NOT_JSON: 'An edited context value is not JSON; quote strings ("text").',
  INSPECT_FORK_FAILED: 'The runtime refused the fork.',
  INSPECT_EXPORT_FAILED: 'The runtime did not export the session.',
} as const;

export type HistoryErrorCode = keyof typeof HISTORY_ERROR_CODES;

/** A coded failure of the inspector's history features; `message` names the place (line, field) and the fix. */
export class HistoryError extends Error {
  constructor(
    readonly code: HistoryErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HistoryError';
  }
}

/** Builds a HistoryError whose message is the specific `detail` followed by the code's advice. */
export function historyError(code: HistoryErrorCode, detail: string, details: Record<string, unknown> = {}): HistoryError {
  return new HistoryError(code, `${detail}. ${HISTORY_ERROR_CODES[code]}`, details);
}
