import type { InspectErrorCode } from './inspect-codes.ts';
import type { RuntimeErrorCode } from './runtime-codes.ts';
import type { StoreErrorCode } from './store-codes.ts';
import type { TestingErrorCode } from './testing-codes.ts';

/**
 * Stable codes of the runtime server, each with the HTTP status it is answered with. The runtime's own codes (a send
 * refused, a session not found) are mapped to a status here too: this is the one place codes meet HTTP.
 */
export const SERVER_ERROR_CODES = {
  SERVER_UNAUTHORIZED: { status: 401, summary: 'The bearer token is missing or wrong (never accepted from the query string).' },
  SERVER_FORBIDDEN_ORIGIN: { status: 403, summary: 'The request comes from a browser origin the server was not told to allow.' },
  SERVER_FORBIDDEN_HOST: { status: 403, summary: 'Without a token only loopback Host names are served (DNS-rebinding guard).' },
  SERVER_BAD_REQUEST: {
    status: 400,
    summary: 'The JSON body or a query parameter does not have the expected shape; the message names the field.',
  },
  SERVER_BAD_JSON: { status: 400, summary: 'The body is not JSON, or is nested deeper than the limit.' },
  SERVER_BAD_SESSION_ID: { status: 400, summary: 'A session id is not 1-128 characters of A-Z a-z 0-9 _ -.' },
  SERVER_BAD_EVENT_ID: { status: 400, summary: 'Last-Event-ID or ?after= is not a non-negative integer.' },
  SERVER_NOT_FOUND: { status: 404, summary: 'No such route.' },
  XSTATE_TRACE_OFF: {
    status: 404,
    summary: 'The server keeps no XState inspection records (it was created without the xstateTrace option).',
  },
  SERVER_STALE_EVENT_ID: { status: 409, summary: 'Last-Event-ID or ?after= is beyond the last event of the session.' },
  SESSION_EXISTS: { status: 409, summary: 'A session with the requested id already exists.' },
  NO_PENDING_APPROVAL: { status: 409, summary: 'The session waits for no approval (or a different one than the request names).' },
  SERVER_INVALID_INPUT: { status: 422, summary: "The input of a new session does not match the machine's context fields." },
  NO_UNRESOLVED_CALL: { status: 409, summary: 'The session is not in needs_attention, or the named call is not one it stopped on.' },
  RESOLVE_RETRY_REFUSED: {
    status: 409,
    summary: 'A resolution asked to run a call again that is not an idempotent tool call (it may have had its effect).',
  },
  SERVER_BODY_TOO_LARGE: { status: 413, summary: 'The request body is larger than the limit.' },
  SERVER_RATE_LIMITED: { status: 429, summary: 'Too many requests from this client or for this session; Retry-After says when to retry.' },
  SERVER_INTERNAL: { status: 500, summary: 'The server failed unexpectedly; the log has the details, the response has none.' },
  SERVER_NOT_READY: { status: 503, summary: 'The store does not answer (readyz).' },
  SERVER_TOKEN_REQUIRED: { status: 500, summary: 'Start refused: a non-loopback host needs a bearer token (FLOWING_TOKEN).' },
  SERVER_RECOVERY_FAILED: {
    status: 500,
    summary: 'A session left mid-step by a previous process could not be resumed (logged at start; the session is left as stored).',
  },
  SERVER_LISTEN_FAILED: { status: 500, summary: 'Start failed: the port could not be bound.' },
  SERVER_BAD_MAX_STREAM_LAG: {
    status: 500,
    summary: 'Start refused: maxStreamLag (--max-stream-lag-bytes, --max-stream-lag-events) must be whole numbers of at least 1.',
  },
  SSE_CLIENT_TOO_SLOW: {
    status: 503,
    summary:
      "Sent as a stream's last `error` event: the client fell more than maxStreamLag behind and is disconnected; reconnect with Last-Event-ID.",
  },
} as const satisfies Record<string, { status: number; summary: string }>;

export type ServerErrorCode = keyof typeof SERVER_ERROR_CODES;

/**
 * HTTP status of each runtime code a request can end with (a `SendResult` refusal or a thrown FlowingError).
 * 404: the thing named does not exist; 422: the event or input is not acceptable to this machine;
 * 409: the session is not in a condition to take it (now or ever). Codes not listed answer 409.
 */
export const RUNTIME_CODE_STATUS = {
  SESSION_NOT_FOUND: 404,
  UNKNOWN_MACHINE: 404,
  UNKNOWN_EVENT: 422,
  INVALID_PAYLOAD: 422,
  CONTEXT_INVALID: 422,
  NO_TRANSITION: 409,
  GUARD_REJECTED: 409,
  SESSION_FINISHED: 409,
  SESSION_CANCELLED: 409,
  SESSION_NEEDS_ATTENTION: 409,
  BUSY: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  APPROVAL_ALREADY_DECIDED: 409,
  INVALID_EVENT_ID: 400,
  RUNTIME_SATURATED: 429,
  STEP_LIMIT: 409,
  SESSION_LOG_FULL: 409,
  BUDGET_EXCEEDED: 409,
  SPEC_CHANGED: 409,
  STORE_CONFLICT: 409,
  STORE_BAD_CURSOR: 400,
  STORE_BAD_QUERY: 400,
  STORE_UNAVAILABLE: 503,
  STORE_READ_ONLY: 503,
  STORE_IN_USE: 503,
  FLOW_STORE_CORRUPT: 500,
  INSPECT_SEQ_OUT_OF_RANGE: 404,
  FORK_CONTEXT_INVALID: 422,
  FORK_NO_STATE: 409,
  FORK_MID_CALL: 409,
  FORK_ENDED: 409,
  FORK_TIMED_STATE: 409,
  SESSION_FILE_INVALID: 422,
  REPLAY_MISSING_CALL: 409,
} as const satisfies Partial<Record<RuntimeErrorCode | StoreErrorCode | InspectErrorCode | TestingErrorCode, number>>;

/**
 * The HTTP status the runtime server answers a code with: the server's own table, then RUNTIME_CODE_STATUS, else 409
 * (a code a tool declared, relayed as a session's failure).
 */
export function statusOf(code: string): number {
  if (Object.hasOwn(SERVER_ERROR_CODES, code)) return SERVER_ERROR_CODES[code as ServerErrorCode].status;
  return Object.hasOwn(RUNTIME_CODE_STATUS, code) ? RUNTIME_CODE_STATUS[code as keyof typeof RUNTIME_CODE_STATUS] : 409;
}
