import type { RuntimeMachine, SessionStatus, SessionSummary, SessionView, WireEvent } from './wire.ts';

/** Where to reach a runtime API: the studio's own mount (`/api/runtime`) or a remote `flowing serve` with its token. */
export interface RuntimeEndpoint {
  baseUrl: string;
  /** Bearer token of a remote server; held in memory only. */
  token?: string;
}

/** An error answer of the runtime API (or no answer): `{ code, message }` with the HTTP status (0: unreachable). */
export class RuntimeApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'RuntimeApiError';
  }
}

/** The answer of sending an event: applied, or refused with the runtime's code. */
export type SendAnswer =
  | { applied: true; state: unknown; status: SessionStatus }
  | { applied: false; code: string; message: string };

/** Joins the base URL and a path (`/sessions`), keeping any path prefix of the base. */
export function runtimeUrl(endpoint: RuntimeEndpoint, path: string): string {
  return `${endpoint.baseUrl.replace(/\/+$/, '')}${path}`;
}

/** Request headers for the endpoint: JSON, and the bearer token when there is one. */
export function runtimeHeaders(endpoint: RuntimeEndpoint, extra: Record<string, string> = {}): Record<string, string> {
  return { accept: 'application/json', ...(endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {}), ...extra };
}

async function call<T>(endpoint: RuntimeEndpoint, method: string, path: string, body?: unknown, acceptRefusal = false): Promise<T> {
  let response: Response;
  try {
    response = await fetch(runtimeUrl(endpoint, path), {
      method,
      headers: runtimeHeaders(endpoint, body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new RuntimeApiError(0, 'RUNTIME_UNREACHABLE', `the runtime at ${endpoint.baseUrl} did not answer (${(err as Error).message})`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new RuntimeApiError(response.status, 'RUNTIME_BAD_RESPONSE', `the runtime answered ${response.status} with a body that is not JSON`);
  }
  // A refused event is an answer, not a failure: the caller shows its code (the runtime logged transition.rejected).
  if (acceptRefusal && (json as { applied?: unknown }).applied === false) return json as T;
  if (!response.ok) {
    const { code = 'RUNTIME_ERROR', message = `HTTP ${response.status}`, ...details } = (json ?? {}) as Record<string, unknown>;
    throw new RuntimeApiError(response.status, String(code), String(message), details);
  }
  return json as T;
}

/** One XState inspection record as the runtime's `GET /sessions/:id/xstate` answers it. */
export interface XStateRecordWire {
  index: number;
  afterSeq: number;
  type: string;
  actor: { id: string; systemSessionId: string; root: boolean };
  event?: { type: string; from?: string };
  transitions?: Array<{ event: string; source: string; targets: string[] }>;
  snapshot?: { status: string; value?: unknown; context?: unknown };
  action?: { type: string };
}

const sessionPath = (id: string) => `/sessions/${encodeURIComponent(id)}`;

/**
 * The runtime API client of the Inspect mode (the only Inspect code besides the event stream that talks HTTP).
 * @example const client = runtimeClient({ baseUrl: '/api/runtime' }); const { sessions } = await client.listSessions();
 */
export function runtimeClient(endpoint: RuntimeEndpoint) {
  return {
    endpoint,
    listMachines: () => call<{ machines: RuntimeMachine[] }>(endpoint, 'GET', '/machines').then((r) => r.machines),
    listSessions: (query: { machine?: string; status?: readonly SessionStatus[]; limit?: number } = {}) => {
      const params = new URLSearchParams();
      if (query.machine) params.set('machine', query.machine);
      if (query.status && query.status.length > 0) params.set('status', query.status.join(','));
      params.set('limit', String(query.limit ?? 100));
      return call<{ sessions: SessionSummary[]; nextCursor?: string }>(endpoint, 'GET', `/sessions?${params}`);
    },
    getSession: (id: string) => call<SessionView>(endpoint, 'GET', sessionPath(id)),
    /** One page of the log after `after`; `nextAfter` is set while more events follow. */
    readEvents: (id: string, after = 0, limit = 1000) =>
      call<{ events: WireEvent[]; nextAfter?: number }>(endpoint, 'GET', `${sessionPath(id)}/events?after=${after}&limit=${limit}`),
    createSession: (machine: string, input: Record<string, unknown>) =>
      call<SessionView>(endpoint, 'POST', '/sessions', { machine, input }),
    sendEvent: (id: string, event: { type: string } & Record<string, unknown>) =>
      call<SendAnswer>(endpoint, 'POST', `${sessionPath(id)}/events`, event, true),
    approve: (id: string, approvalId: string) => call<SendAnswer>(endpoint, 'POST', `${sessionPath(id)}/approve`, { approvalId }, true),
    reject: (id: string, approvalId: string, reason?: string) =>
      call<SendAnswer>(endpoint, 'POST', `${sessionPath(id)}/reject`, { approvalId, ...(reason ? { reason } : {}) }, true),
    /** XState's own inspection records of the session that followed event `afterSeq` (see `XStateRecord`). */
    xstateRecords: (id: string, afterSeq: number) =>
      call<{ records: XStateRecordWire[]; dropped: number }>(endpoint, 'GET', `${sessionPath(id)}/xstate?afterSeq=${afterSeq}`),
    cancel: (id: string) => call<SessionView>(endpoint, 'POST', `${sessionPath(id)}/cancel`, { reason: 'cancelled from the studio' }),
  };
}

export type RuntimeClient = ReturnType<typeof runtimeClient>;
