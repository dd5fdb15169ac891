/** Defaults of the runtime server; every one can be overridden in `createServer(runtime, options)`. */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8787;
/** A send event is a few KB at most; 256 KiB leaves room for large session inputs. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
/** Deepest JSON accepted; JSON.parse and schema checks recurse, so deeper bodies are refused before parsing. */
export const DEFAULT_MAX_JSON_DEPTH = 64;
/** A `:` comment this often keeps proxies from closing an idle stream (SSE practice: about every 15 s). */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** The `retry:` hint sent at the start of every stream. */
export const DEFAULT_RETRY_MS = 1_000;
/** How long a streaming POST's client may be gone before the generation it started is cancelled. */
export const DEFAULT_DISCONNECT_GRACE_MS = 30_000;
/**
 * Events and bytes a stream may have waiting for a client that does not read fast enough; past either, the client
 * is sent SSE_CLIENT_TOO_SLOW and disconnected (it resumes with Last-Event-ID).
 */
export const DEFAULT_MAX_STREAM_LAG = { bytes: 4 * 1024 * 1024, events: 10_000 } as const;
/** How long a client cut off for being too slow has to read what was written before its connection is closed. */
export const DEFAULT_SLOW_CLIENT_CLOSE_MS = 10_000;
/** Requests per client: a burst of `burst`, refilled at `perSecond`. */
export const DEFAULT_CLIENT_RATE = { perSecond: 50, burst: 100 } as const;
/** Writes (events, cancel, approvals) per session. */
export const DEFAULT_SESSION_RATE = { perSecond: 10, burst: 20 } as const;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
/** Event types after which a session's stream ends: the session takes no more events. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set(['session.done', 'session.cancelled']);
