import { access } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createStudioApp } from './app.ts';
import { BUILT_APP_DIR, DEFAULT_STUDIO_HOST, DEFAULT_STUDIO_PORT } from './constants.ts';
import type { CaseChecker } from './cases.ts';
import { createStudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { allowedHostnames } from './guard.ts';
import { createStudioListener } from './listener.ts';
import type { RuntimeAppSource } from './runtime-mount.ts';
import type { ServedSessionFile } from './session-file-route.ts';

export interface StudioOptions {
  /** The project whose machines/ and tools/ the studio edits. */
  rootDir: string;
  /** Port 0 picks a free one (default 5173). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1, loopback only). */
  host?: string;
  /** The built app to serve (default: this package's dist/app). */
  appDir?: string;
  /** The runtime API to mount under `/api/runtime` for the Inspect mode (the CLI passes one over the project's machines). */
  runtimeApp?: RuntimeAppSource;
  /** A session file the page opens with `?inspect=<urlPath>` (`flowing inspect FILE`). */
  sessionFile?: ServedSessionFile;
  /** Checks a recorded case before "Save as case" writes it (the CLI passes the runtime's case parser). */
  checkCase?: CaseChecker;
}

export interface StudioServer {
  /** `http://<host>:<port>/` */
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** The host part of a URL for a listen address (a wildcard address is reached as localhost). */
export function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * Starts the studio: the prebuilt app and its API on one small Node server (Hono), resolving once it listens.
 * Rejects with STUDIO_APP_MISSING when the app was never built, STUDIO_PORT_IN_USE when the port is taken.
 * @example const studio = await startStudio({ rootDir: process.cwd(), port: 0 }); console.log(studio.url)
 */
export async function startStudio(options: StudioOptions): Promise<StudioServer> {
  const host = options.host ?? DEFAULT_STUDIO_HOST;
  const appDir = options.appDir ?? BUILT_APP_DIR;
  await access(join(appDir, 'index.html')).catch(() => {
    throw new StudioError('STUDIO_APP_MISSING', `no built studio app in ${appDir}; run npm run build (vite build) first`, { appDir });
  });
  const context = await createStudioContext(options.rootDir, { checkCase: options.checkCase });
  const {
    app,
    warm,
    close: closeRuntime,
  } = createStudioApp({ context, appDir, runtimeApp: options.runtimeApp, sessionFile: options.sessionFile });
  const server = createServer(createStudioListener(app, { hostnames: allowedHostnames(host) }));
  const port = options.port ?? DEFAULT_STUDIO_PORT;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      context.dispose();
      reject(
        error.code === 'EADDRINUSE'
          ? new StudioError('STUDIO_PORT_IN_USE', `port ${port} on ${host} is taken; start with --port <another> (0 picks a free one)`, {
              port,
              host,
            })
          : error,
      );
    });
    server.listen(port, host, () => resolve());
  });
  const listening = (server.address() as AddressInfo).port;
  // The page needs none of the API's modules; load them while the browser fetches it.
  setImmediate(() => void warm().catch((error: unknown) => console.error('[studio] loading the API failed', error)));
  return {
    url: `http://${hostForUrl(host)}:${listening}/`,
    port: listening,
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        context.dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await closeRuntime();
    },
  };
}
