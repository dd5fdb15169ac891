import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import type { StudioEnv } from './api.ts';
import { isApiUrl, rawApiPathRefusal } from './api-target.ts';
import { errorResponse, StudioError } from './errors.ts';
import { checkRequest, type GuardOptions } from './guard.ts';

/** A Node request listener (`http.createServer(listener)`, or a Connect middleware's first two arguments). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Writes a StudioError as JSON straight onto a Node response (for refusals made before Hono sees the request). */
export function sendNodeError(res: ServerResponse, error: StudioError): void {
  const text = JSON.stringify(error.toJSON());
  res.writeHead(error.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

/**
 * Decides on the raw Node request whether it may reach the studio at all: its own Host and Origin only (DNS
 * rebinding, cross-site requests), and only origin-form targets (`/path`; an absolute-form target would be routed
 * by a path nobody checked). Runs before a URL is built from the Host header.
 */
export function refusal(req: IncomingMessage, guard: GuardOptions, isApi: boolean): StudioError | undefined {
  const refused = checkRequest(req, req.socket.localPort ?? 0, guard, isApi);
  if (refused) return refused;
  if (!req.url?.startsWith('/')) return new StudioError('STUDIO_BAD_PATH', 'the request target must be a path starting with /');
  return isApi ? rawApiPathRefusal(req.url) : undefined;
}

/**
 * The studio's Node listener: the guard, then the Hono app through @hono/node-server.
 * `overrideGlobalObjects: false` keeps Node's own Request/Response globals (inside Vite's process).
 */
export function createStudioListener(
  app: Hono<StudioEnv>,
  guard: GuardOptions,
  options: { overrideGlobalObjects?: boolean } = {},
): NodeListener {
  const hono = getRequestListener(app.fetch, {
    overrideGlobalObjects: options.overrideGlobalObjects ?? true,
    // A target no URL can be built from (e.g. a backslash in it) still gets a coded answer.
    errorHandler: () => errorResponse(new StudioError('STUDIO_BAD_PATH', 'the request target is not a valid URL path')),
  });
  return (req, res) => {
    const refused = refusal(req, guard, isApiUrl(req.url));
    if (refused) sendNodeError(res, refused);
    else void hono(req, res);
  };
}
