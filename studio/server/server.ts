import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStudioApp } from './app.ts';
import { BUILT_APP_DIR, DEFAULT_STUDIO_HOST, DEFAULT_STUDIO_PORT } from './constants.ts';
import { createStudioContext } from './context.ts';
import { allowedHostnames } from './guard.ts';
import { createStudioListener } from './listener.ts';

export interface StudioOptions {
  /** The project whose machines/ and tools/ the studio edits. */
  rootDir: string;
  /** Port 0 picks a free one (default 5173). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1, loopback only). */
  host?: string;
  /** The built app to serve (default: this package's dist/app). */
  appDir?: string;
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
 * @example const studio = await startStudio({ rootDir: process.cwd(), port: 0 }); console.log(studio.url)
 */
export async function startStudio(options: StudioOptions): Promise<StudioServer> {
  const host = options.host ?? DEFAULT_STUDIO_HOST;
  const context = await createStudioContext(options.rootDir);
  const { app, warm } = createStudioApp({ context, appDir: options.appDir ?? BUILT_APP_DIR });
  const server = createServer(createStudioListener(app, { hostnames: allowedHostnames(host) }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_STUDIO_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  // The page needs none of the API's modules; load them while the browser fetches it.
  setImmediate(() => void warm().catch((error: unknown) => console.error('[studio] loading the API failed', error)));
  return {
    url: `http://${hostForUrl(host)}:${port}/`,
    port,
    server,
    close: () => new Promise<void>((resolve) => {
      context.dispose();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
