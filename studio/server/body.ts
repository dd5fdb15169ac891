import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { jsonNestingDepth } from '@flowing/spec';
import { StudioError } from './errors.ts';

/** Largest request body the studio API accepts (a spec is a few KB; 1 MiB leaves room for big machines). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest JSON nesting accepted; JSON.parse and the spec walkers recurse, so deeper input is refused before parsing. */
export const MAX_JSON_DEPTH = 200;

/**
 * Hono's body limit with our code: a declared Content-Length over the limit is refused before any byte is read, a
 * body without one (chunked) as soon as it passes the limit (413 STUDIO_BODY_TOO_LARGE). @hono/node-server then
 * drains at most a bounded amount of the rest before it closes the socket.
 */
export const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw new StudioError('STUDIO_BODY_TOO_LARGE', `the request body is larger than ${MAX_BODY_BYTES} bytes`, { limit: MAX_BODY_BYTES });
  },
});

/**
 * Reads and parses a JSON request body with the depth limit (400 STUDIO_BAD_JSON); the size limit is `limitBody`'s.
 * With `optional`, an empty body reads as undefined.
 */
export async function readJson(c: Context, options: { optional?: boolean } = {}): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (error) {
    throw new StudioError('STUDIO_BAD_REQUEST', `reading the request body failed: ${(error as Error).message}`);
  }
  if (options.optional && text === '') return undefined;
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new StudioError('STUDIO_BAD_JSON', `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, { maxDepth: MAX_JSON_DEPTH });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new StudioError('STUDIO_BAD_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
}
