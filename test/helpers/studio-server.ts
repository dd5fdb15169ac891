import { connect } from 'node:net';
import { join } from 'node:path';
import { inject } from 'vitest';
import { startStudioDevServer } from '@flowing/studio/dev';
import { startStudio } from '@flowing/studio/server';
import { copyProject, REPO_DIR } from './project.ts';
import { checkCase } from '../../bin/studio/case-checker.ts';

export { REPO_DIR };

export interface StudioTestServer {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  /** The project the server edits (a temporary copy unless `rootDir` was given). */
  rootDir: string;
  /** Stops the server and removes the temporary copy it made. */
  close(): Promise<void>;
}

export interface StudioTestServerOptions {
  /** The project to edit (default: a temporary copy of the repository's machines/ and tools/). */
  rootDir?: string;
  /**
   * The app folder served: for the built server the folder of built files (default: the app built from the current
   * sources for this test run, see test/setup/studio-app.ts); with `dev`, the Vite root (default studio/).
   */
  appDir?: string;
  /** Start the Vite dev server (`npm run dev:studio`) instead of the built server (`flowing studio`). */
  dev?: boolean;
}

/**
 * Starts the real studio server on 127.0.0.1 and a free port, against `rootDir` or a temporary copy of the project:
 * the server `flowing studio` runs, serving the app built from the current sources, or with `dev` the Vite dev server.
 * @example const studio = await startStudioServer(); await fetch(`${studio.url}api/machines`); await studio.close();
 */
export async function startStudioServer(options: StudioTestServerOptions = {}): Promise<StudioTestServer> {
  const copy = options.rootDir ? undefined : await copyProject('flowing-studio-');
  const rootDir = options.rootDir ?? copy!.dir;
  const studio = options.dev
    ? await startStudioDevServer({
        rootDir,
        appDir: options.appDir,
        port: 0,
        host: '127.0.0.1',
        logLevel: 'warn',
        cacheDir: join(REPO_DIR, 'node_modules', '.vite-studio-test'),
        checkCase,
      })
    : await startStudio({ rootDir, appDir: options.appDir ?? inject('studioAppDir'), port: 0, host: '127.0.0.1', checkCase });
  return {
    url: studio.url,
    port: studio.port,
    rootDir,
    async close() {
      await studio.close();
      await copy?.remove();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes exactly as given over a fresh TCP connection and reads the answer until the server closes it; nothing
 * is normalised, so tests can send any request line, Host or path spelling. Add `Connection: close` yourself.
 * With `headOnly`, resolves as soon as the status line and headers arrived (for upgrades that stay open).
 */
export function rawHttp(port: number, request: string | Buffer, options: { headOnly?: boolean } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let settled = false;
    const parse = (): RawResponse => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const head = (end < 0 ? text : text.slice(0, end)).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      return { status, headers, body: end < 0 ? '' : Buffer.from(text.slice(end + 4), 'latin1').toString('utf8') };
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (options.headOnly && !settled && Buffer.concat(chunks).includes('\r\n\r\n')) {
        settled = true;
        resolve(parse());
        socket.destroy();
      }
    });
    socket.on('error', (error) => {
      if (!settled) reject(error);
      settled = true;
    });
    socket.on('close', () => {
      if (!settled) resolve(parse());
      settled = true;
    });
    // Not end(): a half-closed client makes Node's HTTP server drop a request it is still answering.
    socket.write(request);
  });
}

/** Builds a request with the given method, raw path and headers (Host defaults to the studio's own). */
export function requestText(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): string {
  const all: Record<string, string> = { Host: `127.0.0.1:${port}`, Connection: 'close', ...headers };
  if (body !== undefined) {
    all['Content-Type'] ??= 'application/json';
    all['Content-Length'] ??= String(Buffer.byteLength(body));
  }
  const lines = Object.entries(all).map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

/** Sends a request byte for byte (JSON body) and returns the raw response with its body parsed as JSON when it is JSON. */
export async function sendRaw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<RawResponse & { json: any }> {
  const response = await rawHttp(port, requestText(port, method, path, headers, body === undefined ? undefined : JSON.stringify(body)));
  let json: any;
  try {
    json = JSON.parse(response.body);
  } catch {
    json = undefined;
  }
  return { ...response, json };
}
