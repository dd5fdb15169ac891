import type { XStateTrace } from '../inspect/xstate-trace.ts';
import type { Context } from 'hono';
import {
  DEFAULT_CLIENT_RATE,
  DEFAULT_DISCONNECT_GRACE_MS,
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_JSON_DEPTH,
  DEFAULT_MAX_STREAM_LAG,
  DEFAULT_RETRY_MS,
  DEFAULT_SESSION_RATE,
  DEFAULT_SLOW_CLIENT_CLOSE_MS,
} from './constants.ts';
import { ServerError } from './errors.ts';
import { redactingLogger, stderrLogger, type ServerLogger } from './log.ts';
import type { RateSpec } from './rate-limit.ts';

/** How the runtime server behaves; every field has a safe default. */
export interface ServerOptions {
  /**
   * Bearer token every request must carry (`Authorization: Bearer <token>`), compared in constant time. Without one,
   * only loopback Host names are served; `startServer` refuses a non-loopback host without one.
   */
  token?: string;
  /** Browser origins allowed to call the API (exact `scheme://host[:port]`); all others get 403. Default: none. */
  corsOrigins?: readonly string[];
  /**
   * Host names (no port; IPv6 in brackets) served when there is no token. Default: any loopback name, i.e.
   * `localhost`, every address of 127.0.0.0/8 and `[::1]` (see isLoopbackHost).
   */
  allowedHosts?: readonly string[];
  maxBodyBytes?: number;
  maxJsonDepth?: number;
  heartbeatMs?: number;
  /** The `retry:` hint of every stream. */
  retryMs?: number;
  /** A streaming POST whose client is gone this long has its session's generation cancelled (0: at once). */
  disconnectGraceMs?: number;
  /**
   * How far a stream's client may fall behind: the events and bytes written for it but not yet taken by its
   * connection (default 10,000 events, 4 MiB). Past either, the stream ends with an `error` event SSE_CLIENT_TOO_SLOW
   * and the connection is closed `closeAfterMs` later (default 10 s) if the client has not read it by then; the
   * session goes on, and the client resumes with Last-Event-ID. A stream catching up on stored events reads them
   * at the client's pace and never counts against this.
   */
  maxStreamLag?: { bytes?: number; events?: number; closeAfterMs?: number };
  /** Per-client (all requests) and per-session (writes) limits; `false` turns one off. */
  rateLimit?: { client?: RateSpec | false; session?: RateSpec | false };
  /** The key a client is limited by. Default: the peer address of the connection (Node), else `unknown`. */
  clientKey?: (c: Context) => string;
  /** Where log lines go (default: JSON lines on stderr); the token and API keys are redacted before it sees them. */
  log?: ServerLogger;
  /** Milliseconds now; injected by tests of the rate limit. */
  now?: () => number;
  /** Whether /healthz and /readyz answer without a token (load balancers rarely carry one). Default true. */
  publicHealth?: boolean;
  /** The flow specs of the served machines by machine id, answered by `GET /machines` (generated code carries none). */
  specs?: Readonly<Record<string, unknown>>;
  /**
   * XState's low-level inspection records, answered by `GET /sessions/:id/xstate`; give the same trace to the
   * runtime (`createRuntime({ inspect: trace.inspect })`). Without one that route answers 404 XSTATE_TRACE_OFF.
   */
  xstateTrace?: XStateTrace;
}

/** ServerOptions with every default filled in. */
export interface ResolvedServerOptions {
  token?: string;
  corsOrigins: ReadonlySet<string>;
  /** The Host names served without a token: a fixed set, or every loopback name. */
  allowedHosts: ReadonlySet<string> | 'loopback';
  maxBodyBytes: number;
  maxJsonDepth: number;
  heartbeatMs: number;
  retryMs: number;
  disconnectGraceMs: number;
  maxStreamLag: { bytes: number; events: number; closeAfterMs: number };
  clientRate: RateSpec | false;
  sessionRate: RateSpec | false;
  clientKey: (c: Context) => string;
  log: ServerLogger;
  now: () => number;
  publicHealth: boolean;
  specs: ReadonlyMap<string, unknown>;
  xstateTrace: XStateTrace | undefined;
}

export function resolveServerOptions(options: ServerOptions = {}): ResolvedServerOptions {
  const token = options.token === undefined || options.token === '' ? undefined : options.token;
  if (token !== undefined && !/^[A-Za-z0-9._~+/-]{16,}=*$/.test(token)) {
    throw new RangeError('the server token must be at least 16 characters of A-Z a-z 0-9 . _ ~ + / - (a bearer token)');
  }
  return {
    token,
    corsOrigins: new Set(options.corsOrigins ?? []),
    allowedHosts: options.allowedHosts === undefined ? 'loopback' : new Set(options.allowedHosts.map((h) => h.toLowerCase())),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxJsonDepth: options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    retryMs: options.retryMs ?? DEFAULT_RETRY_MS,
    disconnectGraceMs: options.disconnectGraceMs ?? DEFAULT_DISCONNECT_GRACE_MS,
    maxStreamLag: {
      bytes: lagBound('bytes', options.maxStreamLag?.bytes, DEFAULT_MAX_STREAM_LAG.bytes),
      events: lagBound('events', options.maxStreamLag?.events, DEFAULT_MAX_STREAM_LAG.events),
      closeAfterMs: lagBound('closeAfterMs', options.maxStreamLag?.closeAfterMs, DEFAULT_SLOW_CLIENT_CLOSE_MS),
    },
    clientRate: options.rateLimit?.client ?? DEFAULT_CLIENT_RATE,
    sessionRate: options.rateLimit?.session ?? DEFAULT_SESSION_RATE,
    clientKey: options.clientKey ?? peerAddress,
    log: redactingLogger(options.log ?? stderrLogger, [token]),
    now: options.now ?? Date.now,
    publicHealth: options.publicHealth ?? true,
    specs: new Map(Object.entries(options.specs ?? {})),
    xstateTrace: options.xstateTrace,
  };
}

function lagBound(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (Number.isSafeInteger(value) && value >= 1) return value;
  throw new ServerError('SERVER_BAD_MAX_STREAM_LAG', `maxStreamLag.${field} must be a whole number ≥ 1, not ${String(value)}`);
}

/** The connection's peer address when served by @hono/node-server (its `incoming` binding). */
function peerAddress(c: Context): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'unknown';
}
