/** Stable codes for edits the graph refuses, each with a message that says what to do instead. */
export const GRAPH_ERROR_CODES = {
  GRAPH_INVALID_NAME: 'The name is not an identifier.',
  GRAPH_DUPLICATE_NAME: 'Another state already has this name.',
  GRAPH_UNKNOWN_ELEMENT: 'The state or transition is no longer in the spec.',
  GRAPH_BAD_MOVE: 'A state cannot move there.',
  GRAPH_INVALID_EVENT: 'The event name is not valid.',
  GRAPH_INVALID_DELAY: 'The delay is not a whole number of milliseconds.',
} as const;

export type GraphErrorCode = keyof typeof GRAPH_ERROR_CODES;

/** The result of an edit: the new spec, or a coded reason why the edit was refused. */
export type EditResult<T> = { ok: true; spec: T; pointer?: string } | { ok: false; code: GraphErrorCode; message: string };

/** Builds a refusal. */
export function refuse(code: GraphErrorCode, message: string): { ok: false; code: GraphErrorCode; message: string } {
  return { ok: false, code, message };
}
