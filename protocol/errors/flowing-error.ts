import type { InspectErrorCode } from './inspect-codes.ts';
import type { RuntimeErrorCode } from './runtime-codes.ts';
import type { ServerErrorCode } from './server-codes.ts';
import type { StoreErrorCode } from './store-codes.ts';
import type { StudioErrorCode } from './studio-codes.ts';
import type { TestingErrorCode } from './testing-codes.ts';

/**
 * The one error shape: what a failed call hands to `onError` guards as `error`, what the event log stores, and the
 * JSON body of every error answer of the runtime server and the studio server. `details` is extra data the code
 * documents (`{ line, reason }` for a session file, `{ problems }` for a spec); a client never needs to parse `message`.
 */
export interface FlowError<Code extends string = string> {
  code: Code;
  message: string;
  details?: unknown;
}

/** Every code of the tables in this package. */
export type KnownErrorCode = RuntimeErrorCode | StoreErrorCode | InspectErrorCode | TestingErrorCode | ServerErrorCode | StudioErrorCode;

/**
 * What `new FlowingError(code, …)` accepts for `code`: a literal must be a code of one of the tables (a misspelt one
 * is a compile error naming the known codes); a value typed `string` passes as it is, because it was relayed from
 * elsewhere (a code a tool declared, an error read back from the log). A tool throws its own codes with `ToolError`.
 */
export type DeclaredCode<Code extends string> = string extends Code ? Code : Code extends KnownErrorCode ? Code : KnownErrorCode;

/**
 * An Error with a stable code from one area's table (`FlowingError<ServerErrorCode>`, `FlowingError<StoreErrorCode>`),
 * or with any code relayed as a `string`. `toJSON()` is the `FlowError` shape.
 * @example
 * throw new FlowingError('SESSION_NOT_FOUND', `no session '${id}'`, { details: { sessionId: id } });
 */
export class FlowingError<Code extends string = string> extends Error implements FlowError<Code> {
  readonly code: Code;
  readonly details?: unknown;
  constructor(code: DeclaredCode<Code>, message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'FlowingError';
    this.code = code as Code;
    this.details = options.details;
  }

  /** The plain `{ code, message, details? }` form stored in logs, handed to `onError` and sent as an error answer. */
  toJSON(): FlowError<Code> {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

const CODE_PATTERN = /^[A-Z][A-Z0-9_]*$/;

/**
 * Whether a value has the FlowError shape (an UPPER_SNAKE `code` and a string `message`); extra keys are allowed, so
 * a refused send (`{ applied: false, code, message }`) and a refused readiness probe read as errors too.
 */
export function isFlowError(value: unknown): value is FlowError {
  if (value === null || typeof value !== 'object') return false;
  const { code, message } = value as { code?: unknown; message?: unknown };
  return typeof code === 'string' && CODE_PATTERN.test(code) && typeof message === 'string';
}

/** Normalises anything thrown into a FlowError, without stack traces. */
export function toFlowError(error: unknown, fallbackCode: string = 'TOOL_FAILED'): FlowError {
  if (error instanceof FlowingError) return error.toJSON();
  if (
    error &&
    typeof error === 'object' &&
    typeof (error as FlowError).code === 'string' &&
    typeof (error as FlowError).message === 'string'
  ) {
    const { code, message, details } = error as FlowError;
    return details === undefined ? { code, message } : { code, message, details };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: fallbackCode, message };
}
