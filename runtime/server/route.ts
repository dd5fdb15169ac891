import type { JsonRouteKey, RouteKey, RoutePath, RouteResponse } from '@flowing/protocol';
import type { Context, Env, Hono } from 'hono';

declare const ANSWERED: unique symbol;

/** A JSON response whose body type the compiler knows (made by `answer`). */
export type Answer<T> = Response & { readonly [ANSWERED]?: T };

/**
 * Answers `body` as JSON; the result carries the body's type, so a handler registered for a route of
 * `RuntimeRoutes` is checked against the answer that route declares.
 */
export function answer<T>(c: Context, body: T, status: 200 | 201 | 409 | 422 | 429 | 503 = 200): Answer<T> {
  return c.json(body as never, status);
}

/** A route's handler: `c.req.param` of the route's `:names` is a string; a JSON route must return its declared answer. */
export type RouteHandler<K extends RouteKey> = (
  c: Context<Env, RoutePath<K>>,
) => K extends JsonRouteKey ? Promise<Answer<RouteResponse<K>>> | Answer<RouteResponse<K>> : Promise<Response> | Response;

/** One handler for each route of the runtime server's protocol, no more, no fewer. */
export type RouteHandlers = { [K in RouteKey]: RouteHandler<K> };

/** Registers every handler on its method and path. */
export function mountRoutes(app: Hono, handlers: RouteHandlers): void {
  for (const key of Object.keys(handlers) as RouteKey[]) {
    const space = key.indexOf(' ');
    app.on(key.slice(0, space), key.slice(space + 1), handlers[key] as (c: Context) => Response | Promise<Response>);
  }
}
