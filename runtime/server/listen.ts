import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Runtime } from '../runtime.ts';
import { DEFAULT_HOST, DEFAULT_PORT } from './constants.ts';
import { createServer } from './create-server.ts';
import { ServerError } from './errors.ts';
import { isLoopbackHost } from './loopback.ts';
import type { ServerOptions } from './options.ts';
import { recoverSessions, type RecoveryReport } from './recover.ts';
import { startTakeover, type Takeover } from './takeover.ts';

export interface StartServerOptions extends ServerOptions {
  /** Default 127.0.0.1. Any other address needs `token`, or the start is refused. */
  host?: string;
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /**
   * Resume the sessions a previous process left mid-step before `/readyz` answers 200 (default true). Requests are
   * served meanwhile; a session being resumed takes its events after the resume. With a store shared between
   * processes (Redis), only sessions whose lease nobody holds are resumed, and the scan repeats so that a dead
   * process's sessions are taken over once their lease expires.
   */
  recover?: boolean;
  /** With a store that has leases: how often to look for sessions whose lease expired mid-step (default TTL/4, at most 1 s). */
  takeoverIntervalMs?: number;
}

/** A running runtime server. */
export interface RunningServer {
  /** `http://host:port` it listens on. */
  url: string;
  /** Resolves when start-up recovery is over (at once without it). */
  recovered: Promise<RecoveryReport>;
  host: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `createServer(runtime, options)` over HTTP with @hono/node-server. Refuses (SERVER_TOKEN_REQUIRED) to listen
 * on a non-loopback address without a token.
 * @example const server = await startServer(runtime, { port: 0 }); console.log(server.url);
 */
export async function startServer(runtime: Runtime, options: StartServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  if (!isLoopbackHost(host) && !options.token) {
    throw new ServerError(
      'SERVER_TOKEN_REQUIRED',
      `listening on ${host} needs a bearer token: set FLOWING_TOKEN (16+ characters), or listen on 127.0.0.1`,
    );
  }
  const app = createServer(runtime, options);
  const server: ServerType = await new Promise((resolve, reject) => {
    const created = serve({ fetch: app.fetch, hostname: host, port: options.port ?? DEFAULT_PORT }, () => resolve(created));
    created.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new ServerError('SERVER_LISTEN_FAILED', `cannot listen on ${host}:${options.port ?? DEFAULT_PORT}: ${error.code ?? error.message}`),
      );
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  app.settings.log({
    level: 'info',
    code: 'SERVER_STARTED',
    message: `serving ${runtime.machines.size} machine(s) on http://${urlHost}:${address.port} with the ${runtime.store.name} store`,
    auth: options.token ? 'bearer token' : 'none (loopback only)',
  });
  let recovered: Promise<RecoveryReport> = Promise.resolve({ resumed: [], failed: [] });
  let takeover: Takeover | undefined;
  if (options.recover ?? true) {
    app.setReady(false);
    if (runtime.store.leases) takeover = startTakeover(runtime, app.settings.log, options.takeoverIntervalMs);
    recovered = (takeover ? takeover.first : recoverSessions(runtime, app.settings.log))
      .catch((error: unknown) => {
        app.settings.log({
          level: 'error',
          code: 'SERVER_RECOVERY_FAILED',
          message: `listing the sessions left mid-step failed: ${(error as Error).message}`,
        });
        return { resumed: [], failed: [] };
      })
      .finally(() => app.setReady(true));
  }
  return {
    url: `http://${urlHost}:${address.port}`,
    recovered,
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        takeover?.stop();
        app.dispose();
        // Open streams would keep close() waiting forever.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
