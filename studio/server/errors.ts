import { FlowingError, STUDIO_ERROR_CODES, type StudioErrorCode } from '@flowing/protocol';

// The code table is part of the wire protocol: the studio app reads the same one.
export { STUDIO_ERROR_CODES, type StudioErrorCode } from '@flowing/protocol';

/** An API failure with a stable code; the router answers its `FlowError` form `{ code, message, details? }` with its status. */
export class StudioError extends FlowingError<StudioErrorCode> {
  readonly status: number;
  declare readonly details?: Record<string, unknown>;
  constructor(code: StudioErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, { details });
    this.name = 'StudioError';
    this.status = STUDIO_ERROR_CODES[code].status;
  }
}

/** Turns any failure into the `FlowError` shape with the code's status; unexpected ones are logged. */
export function errorResponse(error: unknown): Response {
  const studio =
    error instanceof StudioError
      ? error
      : new StudioError('STUDIO_INTERNAL', `studio server failed: ${(error as Error)?.message ?? String(error)}`);
  if (!(error instanceof StudioError)) console.error('[studio] STUDIO_INTERNAL', error);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  };
  // A refused upload may still be arriving; closing the connection stops the rest of it.
  if (studio.status === 413) headers.Connection = 'close';
  return new Response(JSON.stringify(studio.toJSON()), { status: studio.status, headers });
}
