import { Hono } from 'hono';
import type { StudioEnv } from './api.ts';
import { API_PREFIX } from './api-target.ts';
import type { StudioContext } from './context.ts';
import { errorResponse, StudioError } from './errors.ts';
import { RUNTIME_PREFIX, runtimeHandler, type RuntimeAppSource } from './runtime-mount.ts';
import { SESSION_FILE_PREFIX, sessionFileHandler, type ServedSessionFile } from './session-file-route.ts';
import { serveAppFiles } from './static-files.ts';

export interface StudioAppOptions {
  /** The shared handler context (project roots, tools, code generator). */
  context: StudioContext;
  /** The built app to serve; without it only `/api/*` is answered (the Vite dev server serves the app itself). */
  appDir?: string;
  /** The runtime API answered under `/api/runtime` (sessions for the Inspect mode); without it those routes answer 503. */
  runtimeApp?: RuntimeAppSource;
  /** A session file to serve to the page at its `urlPath` (`flowing inspect FILE`). */
  sessionFile?: ServedSessionFile;
}

export interface StudioApp {
  /** The Hono app: the API under `/api`, and the built app's files when `appDir` was given. */
  app: Hono<StudioEnv>;
  /** Loads the API's modules now instead of on the first API request. */
  warm(): Promise<void>;
  /** Closes the mounted runtime (its store), if one was started. */
  close(): Promise<void>;
}

/**
 * The studio's Hono app. The API's modules (spec validation, zod) load on first use, so the page is served as soon
 * as the server listens. The Host/Origin guard runs before this app, on the raw Node request (see listener.ts).
 * @example const { app } = createStudioApp({ context: await createStudioContext(root), appDir })
 */
export function createStudioApp(options: StudioAppOptions): StudioApp {
  let api: Promise<{ fetch: Hono<StudioEnv>['fetch'] }> | undefined;
  const loadApi = () => (api ??= import('./api.ts').then(({ createApiApp }) => createApiApp(options.context)));
  const app = new Hono<StudioEnv>();
  app.onError((error) => errorResponse(error));
  app.notFound(() => errorResponse(new StudioError('STUDIO_NOT_FOUND', 'no such route')));
  const runtime = runtimeHandler(options.runtimeApp);
  if (options.runtimeApp) options.context.runtimeStates ??= (machineId) => runtime.stateCounts(machineId);
  app.all(RUNTIME_PREFIX, runtime);
  app.all(`${RUNTIME_PREFIX}/*`, runtime);
  app.on(['GET', 'HEAD'], `${SESSION_FILE_PREFIX}/:token`, sessionFileHandler(options.sessionFile));
  app.all(API_PREFIX, async (c) => (await loadApi()).fetch(c.req.raw, c.env));
  app.all(`${API_PREFIX}/*`, async (c) => (await loadApi()).fetch(c.req.raw, c.env));
  if (options.appDir) app.on(['GET', 'HEAD'], '*', serveAppFiles(options.appDir));
  app.all('*', (c) => {
    throw new StudioError(
      options.appDir ? 'STUDIO_METHOD_NOT_ALLOWED' : 'STUDIO_NOT_FOUND',
      `${c.req.method} ${c.req.path} is not served here`,
    );
  });
  return { app, warm: () => loadApi().then(() => undefined), close: () => runtime.close() };
}
