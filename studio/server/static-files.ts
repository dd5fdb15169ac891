import { readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { MiddlewareHandler } from 'hono';
import { getMimeType } from 'hono/utils/mime';
import { StudioError } from './errors.ts';
import { isInside } from './roots.ts';

/** Folder of the built app whose files are content-hashed by Vite, so browsers may keep them forever. */
const HASHED_ASSETS = '/assets/';
/** Key and certificate files are never served, even if one ends up in the app folder (dotfiles never are either). */
const DENIED_SUFFIX = /\.(?:crt|pem|key|p12|pfx)$/i;

/** Decodes a URL path into plain segments; undefined for dot segments (`.env`, `..`), encoded separators or NUL. */
function pathSegments(urlPath: string): string[] | undefined {
  const segments: string[] = [];
  for (const raw of urlPath.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment.startsWith('.') || DENIED_SUFFIX.test(segment) || /[/\\\0]/.test(segment)) return undefined;
    segments.push(segment);
  }
  return segments;
}

/** Resolves a request path to a regular file whose real path lies inside `realRoot`, or undefined. */
async function resolveAppFile(realRoot: string, urlPath: string): Promise<string | undefined> {
  const segments = pathSegments(urlPath);
  if (!segments) return undefined;
  const requested = join(realRoot, ...(segments.length === 0 ? ['index.html'] : segments));
  let real: string;
  try {
    // Symlinks are resolved before the check: a link planted inside the app folder that leads out is never served.
    real = await realpath(requested);
    if (!isInside(realRoot, real) || !(await stat(real)).isFile()) return undefined;
  } catch {
    return undefined;
  }
  return real;
}

/**
 * Serves the built studio app (GET/HEAD) from `appDir` and nothing else: only regular files whose real path is inside
 * the folder, no dotfiles or key files, `index.html` for `/`. Anything else is 404 STUDIO_NOT_FOUND.
 * @example app.get('*', serveAppFiles(appDir))
 */
export function serveAppFiles(appDir: string): MiddlewareHandler {
  let realRoot: Promise<string> | undefined;
  return async (c) => {
    realRoot ??= realpath(appDir).catch((error: NodeJS.ErrnoException) => {
      realRoot = undefined;
      throw new StudioError('STUDIO_INTERNAL', `the built studio app is missing (${appDir}: ${error.code}); run npm run build`);
    });
    const file = await resolveAppFile(await realRoot, c.req.path);
    if (!file) throw new StudioError('STUDIO_NOT_FOUND', `no file ${c.req.path} in the studio app`);
    const bytes = await readFile(file);
    c.header('Content-Type', getMimeType(file) ?? 'application/octet-stream');
    c.header('Cache-Control', c.req.path.startsWith(HASHED_ASSETS) ? 'public, max-age=31536000, immutable' : 'no-cache');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'DENY');
    return c.body(bytes);
  };
}
