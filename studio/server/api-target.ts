import { StudioError } from './errors.ts';

/** The prefix every API route lives under. */
export const API_PREFIX = '/api';
/** Characters a raw path segment may hold before any route looks at it; everything else is a bad path. */
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

/** True when the raw request target is under the API prefix. */
export function isApiUrl(url: string | undefined): boolean {
  if (!url) return false;
  const path = url.split('?')[0]!;
  return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
}

/**
 * Refuses traversal, encoded bytes, backslashes and empty segments in the RAW request target of an API route, before
 * the URL parser normalises `a/../b` away and before any route sees a parameter.
 */
export function rawApiPathRefusal(rawUrl: string): StudioError | undefined {
  const path = rawUrl.split('?')[0]!;
  for (const segment of path.slice(API_PREFIX.length + 1).split('/')) {
    if (!SAFE_SEGMENT.test(segment)) {
      return new StudioError('STUDIO_BAD_PATH', `path segment ${JSON.stringify(segment.slice(0, 80))} is not a plain name`, {
        segment: segment.slice(0, 80),
      });
    }
  }
  return undefined;
}
