import { Hono, type Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Runtime } from '../runtime.ts';
import { bodySizeGuard } from './body.ts';
import type { ServerScope } from './context.ts';
import { DisconnectWatch } from './disconnect.ts';
import { errorBody, isCoded, publicError, ServerError, statusOf } from './errors.ts';
import { authGuard, clientRateGuard, hostGuard, originGuard, sessionRateCheck } from './guard.ts';
import { resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './options.ts';
import { mountRoutes } from './route.ts';
import { storeWriteGuard } from './store-guard.ts';
import { xstateRoutes } from './routes/xstate.ts';
import { caseRoutes } from './routes/case.ts';
import { healthRoutes } from './routes/health.ts';
import { inspectRoutes } from './routes/inspect.ts';
import { machineRoutes } from './routes/machines.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { streamRoutes } from './routes/stream.ts';

/** The Hono app `createServer` returns, with what a host process needs to shut it down. */
export interface FlowingServerApp extends Hono {
  /** The options in force (defaults filled in). */
  readonly settings: ResolvedServerOptions;
  /** Clears pending disconnect cancellations; call when the HTTP server closes. */
  dispose(): void;
  /** Sets what `/readyz` answers (503 while false); `startServer` holds it false while it recovers sessions. */
  setReady(ready: boolean): void;
}

/**
 * The runtime's HTTP + SSE API as a Hono app, to serve with `startServer` or mount in your own service.
 * @example
 * const app = createServer(runtime, { token: process.env.FLOWING_TOKEN });
 * serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 8787 });
 */
export function createServer(runtime: Runtime, serverOptions: ServerOptions = {}): FlowingServerApp {
  const options = resolveServerOptions(serverOptions);
  const scope: ServerScope = {
    runtime,
    options,
    checkSessionRate: sessionRateCheck(options),
    disconnects: new DisconnectWatch(options.disconnectGraceMs, options.log),
  };
  const app = new Hono();
  app.onError((error, c) => answerError(error, c, options));
  app.notFound((c) => c.json(new ServerError('SERVER_NOT_FOUND', `no route ${c.req.method} ${c.req.path.slice(0, 200)}`).toJSON(), 404));
  // The rate limit comes before the token check, so guessing tokens is limited too.
  app.use('*', hostGuard(options), ...originGuard(options), clientRateGuard(options), authGuard(options), bodySizeGuard(options));
  app.use('*', storeWriteGuard(runtime.store));
  let ready = true;
  // One handler per route of RuntimeRoutes (@flowing/protocol): a route left out, or an answer of another type, does not compile.
  mountRoutes(app, {
    ...healthRoutes(scope, () => ready),
    ...machineRoutes(scope),
    ...sessionRoutes(scope),
    ...streamRoutes(scope),
    ...inspectRoutes(scope),
    ...caseRoutes(scope),
    ...xstateRoutes(scope),
  });
  return Object.assign(app, {
    settings: options,
    dispose: () => scope.disconnects.close(),
    setReady: (value: boolean) => {
      ready = value;
    },
  });
}

/** One place decides what a client sees of a failure: the FlowError shape (code, message, details), never a stack. */
function answerError(error: Error, c: Context, options: ResolvedServerOptions): Response {
  if (error instanceof ServerError) {
    if (error.status >= 500) options.log({ level: 'error', code: error.code, message: error.message });
    for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
    return c.json(error.toJSON(), error.status as 400);
  }
  if (error instanceof HTTPException) return error.getResponse();
  if (isCoded(error)) {
    const status = statusOf(error.code);
    const retryAfter = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
    // A refusal that knows when a retry can succeed (SESSION_LEASED) says so the standard way.
    const retryAfterMs = (error.details as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
    if (typeof retryAfterMs === 'number') c.header('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    if (status >= 500) options.log({ level: 'error', code: error.code, message: error.message, path: c.req.path });
    return c.json(errorBody(error), status as 400);
  }
  options.log({ level: 'error', code: 'SERVER_INTERNAL', message: `${c.req.method} ${c.req.path}: ${error.message}`, stack: error.stack });
  return c.json(publicError(error), 500);
}
