import type { AddressInfo } from 'node:net';
import { createServer, type ViteDevServer } from 'vite';
import { DEFAULT_STUDIO_HOST, DEFAULT_STUDIO_PORT, studioViteConfig, type StudioConfigOptions } from './config.ts';

export interface StudioServer {
  url: string;
  port: number;
  server: ViteDevServer;
  close(): Promise<void>;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * Starts the studio's Vite dev server (with its API) for a project root and resolves once it listens.
 * Port 0 picks a free port.
 */
export async function startStudio(options: StudioConfigOptions): Promise<StudioServer> {
  const server = await createServer(studioViteConfig(options));
  await server.listen();
  const port = (server.httpServer!.address() as AddressInfo).port;
  const url = `http://${hostForUrl(options.host ?? DEFAULT_STUDIO_HOST)}:${port}/`;
  return { url, port, server, close: () => server.close() };
}

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`port ${JSON.stringify(value)} is not a number from 0 to 65535`);
  return port;
}

/**
 * `flowing studio`: serves the studio for the project in the current directory, on `PORT` (default 5173) and
 * `HOST` (default 127.0.0.1), and prints its URL.
 */
export async function studioCommand(options: { port?: string; host?: string } = {}): Promise<StudioServer> {
  const port = parsePort(options.port) ?? parsePort(process.env.PORT) ?? DEFAULT_STUDIO_PORT;
  const host = options.host ?? (process.env.HOST || DEFAULT_STUDIO_HOST);
  const studio = await startStudio({ rootDir: process.cwd(), port, host });
  process.stdout.write(`Flowing studio: ${studio.url}\n`);
  const stop = (): void => {
    void studio.close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return studio;
}
