import type { IncomingMessage } from 'node:http';
import { jsonNestingDepth } from '@flowing/spec';
import { StudioError } from './errors.ts';

/** Largest request body the studio API accepts (a spec is a few KB; 1 MiB leaves room for big machines). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest JSON nesting accepted; JSON.parse and the spec walkers recurse, so deeper input is refused before parsing. */
export const MAX_JSON_DEPTH = 200;
/** After refusing an oversized body, at most this much more is read and discarded before the socket is closed. */
const DRAIN_LIMIT_BYTES = 8 * MAX_BODY_BYTES;

/**
 * Reads the request body, refusing it with 413 STUDIO_BODY_TOO_LARGE as soon as it passes `limit` bytes
 * (by Content-Length up front, or while streaming when there is none, e.g. chunked).
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    discard(req);
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        req.off('data', onData);
        discard(req);
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.once('error', (error) => {
      if (!done) reject(new StudioError('STUDIO_BAD_REQUEST', `reading the request body failed: ${error.message}`));
      done = true;
    });
  });
}

/**
 * Keeps reading (and dropping) the rest of a refused body so the client receives the error response instead of a reset;
 * a client that keeps sending past the drain limit is cut off.
 */
function discard(req: IncomingMessage): void {
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) req.socket.destroy();
  });
  req.resume();
}

function tooLarge(limit: number): StudioError {
  return new StudioError('STUDIO_BODY_TOO_LARGE', `the request body is larger than ${limit} bytes`, { limit });
}

/** Reads and parses a JSON request body with the size and depth limits (400 STUDIO_BAD_JSON, 413 STUDIO_BODY_TOO_LARGE). */
export async function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const text = (await readBody(req, limit)).toString('utf8');
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new StudioError('STUDIO_BAD_JSON', `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, { maxDepth: MAX_JSON_DEPTH });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new StudioError('STUDIO_BAD_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
}
