import type { StoreErrorCode } from '@flowing/protocol';
import { FlowingError } from '../errors.ts';

// The table is part of the wire protocol (the runtime server answers these codes).
export { STORE_ERROR_CODES, type StoreErrorCode } from '@flowing/protocol';

/**
 * A store error with its code; `details.sessionId` names the session when one is concerned, `details.seq` an event,
 * and `details` adds what else names the place (the file and its owner for STORE_IN_USE).
 */
export function storeError(
  code: StoreErrorCode,
  message: string,
  options: { cause?: unknown; sessionId?: string; seq?: number; details?: Record<string, unknown> } = {},
): FlowingError<StoreErrorCode> {
  const details = {
    ...options.details,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    ...(options.seq === undefined ? {} : { seq: options.seq }),
  };
  return new FlowingError(code, message, { cause: options.cause, ...(Object.keys(details).length > 0 ? { details } : {}) });
}
