/**
 * Every HTTP route of the runtime server (`createServer` in `@flowing/runtime/server`, `flowing serve`) with what it
 * takes and what it answers. The server registers its handlers from a table typed by `RuntimeRoutes` (a missing route,
 * or an answer of another type, does not compile) and the studio's client builds its requests from the same keys.
 * Request bodies are zod schemas: the server validates with them, a client types its bodies with `z.input`.
 */
import { z } from 'zod';
import { SESSION_ID_PATTERN, type SessionStatus } from './events.ts';
import type {
  EventPage,
  ForkView,
  HealthView,
  MachineList,
  MachineStateCounts,
  ReadinessView,
  SendAnswer,
  SessionAtView,
  SessionPage,
  SessionView,
  XStateRecords,
} from './views.ts';

const sessionId = z.string().regex(SESSION_ID_PATTERN, 'a session id is 1-128 characters of A-Z a-z 0-9 _ -');

/** `POST /sessions`: the machine, the first context fields (checked against the machine's context) and an optional id. */
export const CreateSessionBody = z.strictObject({
  machine: z.string().min(1).max(200),
  input: z.record(z.string(), z.unknown()).optional(),
  sessionId: sessionId.optional(),
});

/** `POST /sessions/:id/approve` and `/reject`: the approval decided (refused when another one is pending) and a reason. */
export const DecisionBody = z.strictObject({
  approvalId: z.string().max(400).optional(),
  reason: z.string().max(2000).optional(),
});

/** `POST /sessions/:id/cancel`. */
export const CancelBody = z.strictObject({ reason: z.string().max(2000).optional() });

/**
 * `POST /sessions/:id/resolve`: what a person says about a call the session stopped on: it completed with this output
 * (delivered to the machine as the call's result), it failed with this error (delivered as the call's error), or run
 * it again (`retry`, only an idempotent tool call: a call that may have had its effect is never repeated on anyone's
 * word).
 */
export const ResolutionBody = z.discriminatedUnion('outcome', [
  z.strictObject({
    callId: z.string().min(1).max(400),
    outcome: z.literal('completed'),
    output: z.unknown(),
    note: z.string().max(2000).optional(),
  }),
  z.strictObject({
    callId: z.string().min(1).max(400),
    outcome: z.literal('failed'),
    error: z.strictObject({
      code: z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'an error code is UPPER_SNAKE'),
      message: z.string().max(2000),
    }),
    note: z.string().max(2000).optional(),
  }),
  z.strictObject({ callId: z.string().min(1).max(400), outcome: z.literal('retry'), note: z.string().max(2000).optional() }),
]);
export type Resolution = z.infer<typeof ResolutionBody>;

/**
 * `POST /sessions/:id/fork`: fork the session at the state and context it had right after event `atSeq`. `context` is
 * a patch of top-level context fields (each replaces the field; `null` clears an optional one), checked against the
 * machine's context schema. `sessionId` picks the new session's id (otherwise a random one).
 */
export const ForkBody = z.strictObject({
  atSeq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  context: z.record(z.string(), z.unknown()).optional(),
  sessionId: sessionId.optional(),
});
export type ForkRequest = z.input<typeof ForkBody>;

/** An event sent to a session: its type and payload, checked by the runtime against the machine's declared events. */
export type EventBody = { type: string } & Record<string, unknown>;

/** A query parameter as a client passes it (lists are sent comma-separated). */
export type QueryValue = string | number | readonly string[] | undefined;

/**
 * The runtime server's routes, `'METHOD /path'` to what each takes (`body`, `query`) and answers: `json` routes answer
 * `response` as JSON, `text` ones a file, `sse` ones an event stream. Every error answer, of every route, is the
 * `FlowError` shape with the code's status (`statusOf`).
 */
export interface RuntimeRoutes {
  'GET /healthz': { kind: 'json'; response: HealthView };
  'GET /readyz': { kind: 'json'; response: ReadinessView };
  'GET /machines': { kind: 'json'; response: MachineList };
  /** Sessions still taking events by active state path: what the studio asks before saving an edit that removes states. */
  'GET /machines/:id/states': { kind: 'json'; response: MachineStateCounts };
  /**
   * With `stale=true`: the sessions recorded under another version of their machine that do not continue on the served
   * one, each with `stale` (reasons, versions, whether the migration hook carries it over); one page, no cursor.
   */
  'GET /sessions': {
    kind: 'json';
    query: { machine?: string; status?: readonly SessionStatus[]; limit?: number; cursor?: string; stale?: boolean };
    response: SessionPage;
  };
  /** 201, `Location: /sessions/<id>`. */
  'POST /sessions': { kind: 'json'; body: z.input<typeof CreateSessionBody>; response: SessionView };
  'GET /sessions/:id': { kind: 'json'; response: SessionView };
  'GET /sessions/:id/events': { kind: 'json'; query: { after?: number; limit?: number }; response: EventPage };
  'POST /sessions/:id/events': { kind: 'json'; body: EventBody; response: SendAnswer };
  /** The events the send causes (SSE, `id:` = seq), then one `result` event (`StreamResult`). */
  'POST /sessions/:id/events/stream': { kind: 'sse'; body: EventBody };
  /** SSE from `?after=` or `Last-Event-ID`, heartbeats, ends when the session finished; 204 when nothing is left. */
  'GET /sessions/:id/stream': { kind: 'sse'; query: { after?: number } };
  'POST /sessions/:id/cancel': { kind: 'json'; body: z.input<typeof CancelBody>; response: SessionView };
  'POST /sessions/:id/resolve': { kind: 'json'; body: z.input<typeof ResolutionBody>; response: SessionView };
  'POST /sessions/:id/approve': { kind: 'json'; body: z.input<typeof DecisionBody>; response: SendAnswer };
  'POST /sessions/:id/reject': { kind: 'json'; body: z.input<typeof DecisionBody>; response: SendAnswer };
  'GET /sessions/:id/at/:seq': { kind: 'json'; response: SessionAtView };
  /** `application/x-ndjson`, a session file (`parseSessionFile`), with `Content-Disposition: attachment; filename=…`. */
  'GET /sessions/:id/export': { kind: 'text' };
  /** 201, `Location: /sessions/<new id>`. */
  'POST /sessions/:id/fork': { kind: 'json'; body: ForkRequest; response: ForkView };
  /** `application/x-ndjson`, a regression case file for `flowing test`. */
  'GET /sessions/:id/case': { kind: 'text'; query: { name?: string; context?: readonly string[] } };
  'GET /sessions/:id/xstate': { kind: 'json'; query: { afterSeq?: number }; response: XStateRecords };
}

export type RouteKey = keyof RuntimeRoutes;
/** The routes that answer JSON. */
export type JsonRouteKey = { [K in RouteKey]: RuntimeRoutes[K]['kind'] extends 'json' ? K : never }[RouteKey];
export type RouteMethod<K extends RouteKey> = K extends `${infer M} ${string}` ? M : never;
export type RoutePath<K extends RouteKey> = K extends `${string} ${infer P}` ? P : never;
export type RouteResponse<K extends JsonRouteKey> = RuntimeRoutes[K] extends { response: infer T } ? T : never;
export type RouteBody<K extends RouteKey> = RuntimeRoutes[K] extends { body: infer T } ? T : undefined;
export type RouteQuery<K extends RouteKey> = RuntimeRoutes[K] extends { query: infer T } ? T : undefined;

type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;
/** The `:name` segments of a route's path, as a client fills them in. */
export type RouteParams<K extends RouteKey> = { [N in ParamNames<RoutePath<K>>]: string | number };

/** What a client passes to call a route: its `:name` values, its query and its body, as the route declares them. */
export type RouteInput<K extends RouteKey> = ([ParamNames<RoutePath<K>>] extends [never]
  ? { params?: undefined }
  : { params: RouteParams<K> }) &
  (RouteQuery<K> extends undefined ? { query?: undefined } : { query?: RouteQuery<K> }) &
  (RouteBody<K> extends undefined ? { body?: undefined } : { body: RouteBody<K> });

/** Every route and the kind of its answer: the list a server serves and a test walks. */
export const RUNTIME_ROUTES = {
  'GET /healthz': 'json',
  'GET /readyz': 'json',
  'GET /machines': 'json',
  'GET /machines/:id/states': 'json',
  'GET /sessions': 'json',
  'POST /sessions': 'json',
  'GET /sessions/:id': 'json',
  'GET /sessions/:id/events': 'json',
  'POST /sessions/:id/events': 'json',
  'POST /sessions/:id/events/stream': 'sse',
  'GET /sessions/:id/stream': 'sse',
  'POST /sessions/:id/cancel': 'json',
  'POST /sessions/:id/resolve': 'json',
  'POST /sessions/:id/approve': 'json',
  'POST /sessions/:id/reject': 'json',
  'GET /sessions/:id/at/:seq': 'json',
  'GET /sessions/:id/export': 'text',
  'POST /sessions/:id/fork': 'json',
  'GET /sessions/:id/case': 'text',
  'GET /sessions/:id/xstate': 'json',
} as const satisfies { [K in RouteKey]: RuntimeRoutes[K]['kind'] };

/**
 * The path and query string of a request to a route: `:name` segments filled in (URL-encoded), query values set when
 * defined, lists joined with commas.
 * @example
 * routeUrl('GET /sessions/:id/events', { id: 's-1' }, { after: 10 }); // '/sessions/s-1/events?after=10'
 */
export function routeUrl<K extends RouteKey>(key: K, params?: RouteParams<K>, query?: RouteQuery<K>): string {
  const path = key
    .slice(key.indexOf(' ') + 1)
    .replace(/:([A-Za-z]+)/g, (_, name: string) =>
      encodeURIComponent(String((params as Record<string, string | number> | undefined)?.[name])),
    );
  const pairs: string[] = [];
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, QueryValue>)) {
    if (value === undefined) continue;
    pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(typeof value === 'object' ? value.join(',') : String(value))}`);
  }
  return pairs.length === 0 ? path : `${path}?${pairs.join('&')}`;
}
