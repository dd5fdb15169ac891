import { routeUrl, type JsonRouteKey, type RouteInput, type RouteKey, type RouteResponse, type SessionStatus } from '@flowing/protocol';
import { jsonOf, request } from '../api-error.ts';

/** Where to reach a runtime API: the studio's own mount (`/api/runtime`) or a remote `flowing serve` with its token. */
export interface RuntimeEndpoint {
  baseUrl: string;
  /** Bearer token of a remote server; held in memory only. */
  token?: string;
}

/** Joins the base URL and a path (`/sessions`), keeping any path prefix of the base. */
export function runtimeUrl(endpoint: RuntimeEndpoint, path: string): string {
  return `${endpoint.baseUrl.replace(/\/+$/, '')}${path}`;
}

/** Request headers for the endpoint: JSON, and the bearer token when there is one. */
export function runtimeHeaders(endpoint: RuntimeEndpoint, extra: Record<string, string> = {}): Record<string, string> {
  return { accept: 'application/json', ...(endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {}), ...extra };
}

/** The URL of a route of the runtime server at this endpoint. */
export function routeAt<K extends RouteKey>(endpoint: RuntimeEndpoint, key: K, input: RouteInput<K>): string {
  return runtimeUrl(endpoint, routeUrl(key, input.params, input.query));
}

/** Sends a request to a route; its answer, or an ApiError. */
async function send<K extends RouteKey>(endpoint: RuntimeEndpoint, key: K, input: RouteInput<K>, accept: string, acceptRefusal = false) {
  const method = key.slice(0, key.indexOf(' '));
  const body = input.body === undefined ? undefined : JSON.stringify(input.body);
  return request(
    'runtime',
    `the runtime at ${endpoint.baseUrl}`,
    routeAt(endpoint, key, input),
    {
      method,
      headers: runtimeHeaders(endpoint, { accept, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }),
      body,
    },
    { acceptRefusal },
  );
}

/**
 * Calls a JSON route of the runtime server and answers what the route declares (`RuntimeRoutes` in @flowing/protocol).
 * `acceptRefusal`: a refused send is an answer (`{ applied: false, code, message }`), not a failure.
 * @example const view = await callRoute(endpoint, 'GET /sessions/:id', { params: { id } });
 */
export async function callRoute<K extends JsonRouteKey>(
  endpoint: RuntimeEndpoint,
  key: K,
  input: RouteInput<K>,
  options: { acceptRefusal?: boolean } = {},
): Promise<RouteResponse<K>> {
  const { response, text } = await send(endpoint, key, input, 'application/json', options.acceptRefusal);
  return jsonOf<RouteResponse<K>>('runtime', response.status, text);
}

/** Calls a route that answers a file (export, case); the response, or an ApiError. */
export async function fetchRouteText<K extends RouteKey>(
  endpoint: RuntimeEndpoint,
  key: K,
  input: RouteInput<K>,
): Promise<{ response: Response; text: string }> {
  return send(endpoint, key, input, 'application/x-ndjson');
}

/**
 * The runtime API client of the Inspect mode (the only Inspect code besides the event stream that talks HTTP).
 * @example const client = runtimeClient({ baseUrl: '/api/runtime' }); const { sessions } = await client.listSessions();
 */
export function runtimeClient(endpoint: RuntimeEndpoint) {
  return {
    endpoint,
    listMachines: () => callRoute(endpoint, 'GET /machines', {}).then((r) => r.machines),
    listSessions: (query: { machine?: string; status?: readonly SessionStatus[]; limit?: number } = {}) =>
      callRoute(endpoint, 'GET /sessions', {
        query: {
          ...(query.machine ? { machine: query.machine } : {}),
          ...(query.status && query.status.length > 0 ? { status: query.status } : {}),
          limit: query.limit ?? 100,
        },
      }),
    getSession: (id: string) => callRoute(endpoint, 'GET /sessions/:id', { params: { id } }),
    /** One page of the log after `after`; `nextAfter` is set while more events follow. */
    readEvents: (id: string, after = 0, limit = 1000) =>
      callRoute(endpoint, 'GET /sessions/:id/events', { params: { id }, query: { after, limit } }),
    createSession: (machine: string, input: Record<string, unknown>) => callRoute(endpoint, 'POST /sessions', { body: { machine, input } }),
    sendEvent: (id: string, event: { type: string } & Record<string, unknown>) =>
      callRoute(endpoint, 'POST /sessions/:id/events', { params: { id }, body: event }, { acceptRefusal: true }),
    approve: (id: string, approvalId: string) =>
      callRoute(endpoint, 'POST /sessions/:id/approve', { params: { id }, body: { approvalId } }, { acceptRefusal: true }),
    reject: (id: string, approvalId: string, reason?: string) =>
      callRoute(
        endpoint,
        'POST /sessions/:id/reject',
        { params: { id }, body: { approvalId, ...(reason ? { reason } : {}) } },
        { acceptRefusal: true },
      ),
    /** XState's own inspection records of the session that followed event `afterSeq` (see `XStateRecord`). */
    xstateRecords: (id: string, afterSeq: number) =>
      callRoute(endpoint, 'GET /sessions/:id/xstate', { params: { id }, query: { afterSeq } }),
    cancel: (id: string) =>
      callRoute(endpoint, 'POST /sessions/:id/cancel', { params: { id }, body: { reason: 'cancelled from the studio' } }),
  };
}

export type RuntimeClient = ReturnType<typeof runtimeClient>;
