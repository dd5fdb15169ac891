import { Hono } from 'hono';
import { API_PREFIX, createApiApp, type StudioEnv } from './api.ts';
import type { StudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { serveAppFiles } from './static-files.ts';

export interface StudioAppOptions {
  /** The shared handler context (project roots, tools, code generator). */
  context: StudioContext;
  /** The built app to serve; without it only `/api/*` is answered (the Vite dev server serves the app itself). */
  appDir?: string;
}

/** Turns any failure into `{ code, message, ...details }` with the code's status; unexpected ones are logged. */
export function errorResponse(error: unknown): Response {
  const studio = error instanceof StudioError ? error : new StudioError('STUDIO_INTERNAL', `studio server failed: ${(error as Error)?.message ?? String(error)}`);
  if (!(error instanceof StudioError)) console.error('[studio] STUDIO_INTERNAL', error);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  };
  // A refused upload may still be arriving; closing the connection stops the rest of it.
  if (studio.status === 413) headers.Connection = 'close';
  return new Response(JSON.stringify(studio.toJSON()), { status: studio.status, headers });
}

/**
 * The studio's Hono app: the API under `/api`, and the built app's files when `appDir` is given. The Host/Origin guard
 * runs before it, on the raw Node request (see listener.ts).
 * @example const app = createStudioApp({ context: await createStudioContext(root), appDir })
 */
export function createStudioApp(options: StudioAppOptions): Hono<StudioEnv> {
  const app = new Hono<StudioEnv>();
  app.onError((error) => errorResponse(error));
  app.notFound(() => errorResponse(new StudioError('STUDIO_NOT_FOUND', 'no such route')));
  app.route(API_PREFIX, createApiApp(options.context));
  if (options.appDir) app.on(['GET', 'HEAD'], '*', serveAppFiles(options.appDir));
  app.all('*', (c) => {
    throw new StudioError(options.appDir ? 'STUDIO_METHOD_NOT_ALLOWED' : 'STUDIO_NOT_FOUND', `${c.req.method} ${c.req.path} is not served here`);
  });
  return app;
}
