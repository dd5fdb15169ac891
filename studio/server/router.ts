import type { IncomingMessage, ServerResponse } from 'node:http';
import { StudioError } from './errors.ts';

/** What a route handler gets: the request, and the raw URL segments its pattern named with `:`. */
export interface RouteContext {
  req: IncomingMessage;
  params: Record<string, string>;
}

/** A handler answers with a status and a JSON body, or throws a StudioError. */
export type RouteHandler = (context: RouteContext) => Promise<{ status?: number; body: unknown }>;

export interface Route {
  method: 'GET' | 'PUT' | 'POST';
  /** Segments after `/api/`, e.g. `machines/:id/generate`. */
  path: string;
  handler: RouteHandler;
}

/** The prefix every API route lives under. */
export const API_PREFIX = '/api';
/** Characters a raw path segment may hold before any route looks at it; everything else is a bad path. */
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

/** True when the raw request URL is under the API prefix. */
export function isApiUrl(url: string | undefined): boolean {
  if (!url) return false;
  const path = url.split('?')[0]!;
  return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
}

/** Splits the raw path into segments, refusing traversal, encoded bytes, backslashes and empty segments up front. */
function segmentsOf(url: string): string[] {
  const path = url.split('?')[0]!;
  const segments = path.slice(API_PREFIX.length + 1).split('/');
  for (const segment of segments) {
    if (!SAFE_SEGMENT.test(segment)) {
      throw new StudioError('STUDIO_BAD_PATH', `path segment ${JSON.stringify(segment.slice(0, 80))} is not a plain name`, { segment: segment.slice(0, 80) });
    }
  }
  return segments;
}

function match(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i]!;
    if (part.startsWith(':')) params[part.slice(1)] = segments[i]!;
    else if (part !== segments[i]) return undefined;
  }
  return params;
}

/** Writes a JSON answer with headers that keep browsers from caching or sniffing it. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

/** Sends a StudioError (or an unexpected error as STUDIO_INTERNAL) as `{ code, message, ...details }`. */
export function sendError(res: ServerResponse, error: unknown): void {
  const studio = error instanceof StudioError ? error : new StudioError('STUDIO_INTERNAL', `studio API failed: ${(error as Error)?.message ?? String(error)}`);
  if (!(error instanceof StudioError)) console.error('[studio] STUDIO_INTERNAL', error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A refused request may still be uploading; closing the connection stops the rest of the body.
  if (studio.status === 413) res.setHeader('Connection', 'close');
  sendJson(res, studio.status, studio.toJSON());
}

/** Builds the request dispatcher for a list of routes (404 for unknown paths, 405 for a wrong method). */
export function createRouter(routes: Route[]): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const compiled = routes.map((route) => ({ ...route, pattern: route.path.split('/') }));
  return async (req, res) => {
    try {
      const segments = segmentsOf(req.url ?? '');
      let allowed = false;
      for (const route of compiled) {
        const params = match(route.pattern, segments);
        if (!params) continue;
        allowed = true;
        if (route.method !== req.method) continue;
        const { status = 200, body } = await route.handler({ req, params });
        sendJson(res, status, body);
        return;
      }
      if (allowed) throw new StudioError('STUDIO_METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.url}`);
      throw new StudioError('STUDIO_NOT_FOUND', `no API route ${req.method} ${(req.url ?? '').split('?')[0]}`);
    } catch (error) {
      sendError(res, error);
    }
  };
}
