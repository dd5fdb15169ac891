import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { cors } from 'hono/cors';
import { ServerError } from './errors.ts';
import { isLoopbackHost } from './loopback.ts';
import type { ResolvedServerOptions } from './options.ts';
import { RateLimiter } from './rate-limit.ts';

/** Health routes, also when the app is mounted under a prefix of another app. */
function isHealthPath(path: string): boolean {
  return path.endsWith('/healthz') || path.endsWith('/readyz');
}

/** Host name of a Host header value (`[::1]` form for IPv6), lower-cased; undefined when it is not a host[:port]. */
function hostnameOf(host: string | undefined): string | undefined {
  const match = host === undefined ? null : /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s]+)(?::\d{1,5})?$/.exec(host);
  return match ? match[1]!.toLowerCase() : undefined;
}

/**
 * Without a token, a server on loopback is reachable by any page whose host name resolves to 127.0.0.1 (DNS
 * rebinding); only the allowed host names are served. With a token, the token is the guard.
 */
export function hostGuard(options: ResolvedServerOptions): MiddlewareHandler {
  return async (c, next) => {
    if (options.token === undefined) {
      const name = hostnameOf(c.req.header('host'));
      const allowed = name !== undefined && (options.allowedHosts === 'loopback' ? isLoopbackHost(name) : options.allowedHosts.has(name));
      if (!allowed) {
        throw new ServerError(
          'SERVER_FORBIDDEN_HOST',
          `host ${JSON.stringify(c.req.header('host') ?? '')} is not served without a token; use a loopback address (127.0.0.1, localhost) or set a token`,
        );
      }
    }
    await next();
  };
}

/**
 * Refuses browser requests from origins not named in `corsOrigins` (Origin header, or a cross-site Sec-Fetch-Site
 * without one), then answers CORS for the named ones. No wildcard is ever sent.
 */
export function originGuard(options: ResolvedServerOptions): MiddlewareHandler[] {
  const refuse: MiddlewareHandler = async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined && !options.corsOrigins.has(origin)) {
      throw new ServerError(
        'SERVER_FORBIDDEN_ORIGIN',
        `requests from origin ${JSON.stringify(origin.slice(0, 200))} are refused; start the server with that origin in corsOrigins (--cors) to allow it`,
      );
    }
    const site = c.req.header('sec-fetch-site');
    if (origin === undefined && (site === 'cross-site' || site === 'same-site')) {
      throw new ServerError('SERVER_FORBIDDEN_ORIGIN', `a ${site} browser request without an allowed Origin is refused`);
    }
    await next();
  };
  const answer = cors({
    origin: (origin) => (options.corsOrigins.has(origin) ? origin : null),
    allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Last-Event-ID'],
    exposeHeaders: ['Retry-After'],
    maxAge: 600,
  });
  return [refuse, answer];
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function unauthorized(message: string) {
  return (c: Context) => c.json(new ServerError('SERVER_UNAUTHORIZED', message).toJSON(), 401);
}

/** Requires `Authorization: Bearer <token>` (never a query parameter); both sides are hashed, then compared in constant time. */
export function authGuard(options: ResolvedServerOptions): MiddlewareHandler {
  const token = options.token;
  if (token === undefined) return async (_c, next) => next();
  const expected = sha256(token);
  const check = bearerAuth({
    verifyToken: (given) => timingSafeEqual(sha256(given), expected),
    noAuthenticationHeader: { message: unauthorized('this server needs `Authorization: Bearer <token>`') },
    invalidAuthenticationHeader: { message: unauthorized('the Authorization header is not `Bearer <token>`') },
    invalidToken: { message: unauthorized('the bearer token is wrong') },
  });
  return async (c, next) => {
    if (options.publicHealth && isHealthPath(c.req.path)) return next();
    return check(c, next);
  };
}

/** The per-client limit on every request (429 SERVER_RATE_LIMITED with Retry-After in seconds). */
export function clientRateGuard(options: ResolvedServerOptions): MiddlewareHandler {
  if (options.clientRate === false) return async (_c, next) => next();
  const limiter = new RateLimiter(options.clientRate, options.now);
  return async (c, next) => {
    if (isHealthPath(c.req.path)) return next();
    const waitMs = limiter.take(options.clientKey(c));
    if (waitMs > 0) throw rateLimited('this client', waitMs);
    await next();
  };
}

/** A per-session limiter for writes; `check(id)` throws the 429 when the session is over its rate. */
export function sessionRateCheck(options: ResolvedServerOptions): (sessionId: string) => void {
  if (options.sessionRate === false) return () => {};
  const limiter = new RateLimiter(options.sessionRate, options.now);
  return (sessionId) => {
    const waitMs = limiter.take(sessionId);
    if (waitMs > 0) throw rateLimited(`session ${sessionId}`, waitMs);
  };
}

function rateLimited(who: string, waitMs: number): ServerError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ServerError('SERVER_RATE_LIMITED', `too many requests for ${who}; retry in ${seconds} s`, {
    headers: { 'Retry-After': String(seconds) },
    details: { retryAfterSeconds: seconds },
  });
}
