import type { StoreErrorCode } from '@flowing/protocol';
import { FlowingError } from '../errors.ts';

// The table is part of the wire protocol (the runtime server answers these codes).
export { STORE_ERROR_CODES, type StoreErrorCode } from '@flowing/protocol';

/** A store error with its code; `details.sessionId` names the session when one is concerned. */
export function storeError(
  code: StoreErrorCode,
  message: string,
  options: { cause?: unknown; sessionId?: string } = {},
): FlowingError<StoreErrorCode> {
  return new FlowingError(code, message, {
    cause: options.cause,
    ...(options.sessionId === undefined ? {} : { details: { sessionId: options.sessionId } }),
  });
}
