import { FlowingError, statusOf, type FlowError, type ServerErrorCode } from '@flowing/protocol';

// The code tables and their statuses are part of the wire protocol: clients read the same ones.
export { SERVER_ERROR_CODES, RUNTIME_CODE_STATUS, statusOf, type ServerErrorCode } from '@flowing/protocol';

/** A request failure with a stable code; the server's error handler answers its `FlowError` form with its status. */
export class ServerError extends FlowingError<ServerErrorCode> {
  readonly status: number;
  /** Response headers that belong to the refusal (Retry-After, WWW-Authenticate). */
  readonly headers?: Record<string, string>;
  constructor(
    code: ServerErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(code, message, { details: options.details });
    this.name = 'ServerError';
    this.status = statusOf(code);
    this.headers = options.headers;
  }
}

/** Whether a thrown value carries a stable code of its own (a FlowingError, a store error, a ServerError). */
export function isCoded(error: unknown): error is Error & { code: string; details?: unknown } {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === 'string' &&
    /^[A-Z][A-Z0-9_]*$/.test((error as unknown as { code: string }).code)
  );
}

/** The error answer of a coded failure: `{ code, message, details? }`, the one shape every error answer has. */
export function errorBody(error: Error & { code: string; details?: unknown }): FlowError {
  return error.details === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, details: error.details };
}

/** What a client may see of a failure: a coded error's code and message; for anything else, a code and no detail. */
export function publicError(error: unknown): FlowError {
  if (isCoded(error)) return { code: error.code, message: error.message };
  return { code: 'SERVER_INTERNAL', message: 'the server failed while answering this request; its log has the details' };
}
