import type { AddressInfo } from 'node:net';
import { createServer, type ViteDevServer } from 'vite';
import { DEFAULT_STUDIO_HOST } from './constants.ts';
import { hostForUrl } from './server.ts';
import { studioViteConfig, type StudioConfigOptions } from './vite-config.ts';

export { studioViteConfig, type StudioConfigOptions } from './vite-config.ts';
export { studioApiPlugin, type StudioApiOptions } from './vite-plugin.ts';

export interface StudioDevServer {
  url: string;
  port: number;
  server: ViteDevServer;
  close(): Promise<void>;
}

/**
 * Starts the studio's Vite dev server (HMR, with the same API as `flowing studio`) and resolves once it listens.
 * For working on the studio itself (`npm run dev:studio`); port 0 picks a free port.
 */
export async function startStudioDevServer(options: StudioConfigOptions): Promise<StudioDevServer> {
  const server = await createServer(studioViteConfig(options));
  await server.listen();
  const port = (server.httpServer!.address() as AddressInfo).port;
  return { url: `http://${hostForUrl(options.host ?? DEFAULT_STUDIO_HOST)}:${port}/`, port, server, close: () => server.close() };
}
