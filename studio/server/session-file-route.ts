import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { MAX_SESSION_FILE_CHARS } from '@flowing/protocol';
import type { Context } from 'hono';
import { API_PREFIX } from './api-target.ts';
import { StudioError } from './errors.ts';

/** Where the studio serves the session file `flowing inspect FILE` opened (followed by the file's token). */
export const SESSION_FILE_PREFIX = `${API_PREFIX}/inspect-file`;
/**
 * Largest file read before its characters are counted: UTF-8 spends at most 3 bytes on a UTF-16 code unit, so a file
 * over this many bytes has more characters than any session file may (MAX_SESSION_FILE_CHARS).
 */
const MAX_READ_BYTES = 3 * MAX_SESSION_FILE_CHARS;

/** A session file the studio serves to its own page at an unguessable path, for as long as it runs. */
export interface ServedSessionFile {
  /** `/api/inspect-file/<token>`: the page opens it with `?inspect=<urlPath>`. */
  urlPath: string;
  /** The file's base name (letters, digits, `.`, `_` and `-` only), shown in the studio. */
  name: string;
  text: string;
}

/**
 * Reads a session file to serve: the text is read once (the page may reload it while the studio runs), under a random
 * token so no other path of the file system is reachable. Rejects with STUDIO_NOT_FOUND when the file cannot be read
 * and STUDIO_BODY_TOO_LARGE when it has more characters than a session file may (the parser's one limit,
 * MAX_SESSION_FILE_CHARS); the studio app checks its content.
 * @example const file = await loadServedSessionFile('refund.flowing.jsonl'); startStudio({ ..., sessionFile: file })
 */
export async function loadServedSessionFile(path: string): Promise<ServedSessionFile> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) throw new StudioError('STUDIO_NOT_FOUND', `no session file at ${path}`, { path });
  const tooLarge = (size: string) =>
    new StudioError('STUDIO_BODY_TOO_LARGE', `${path} has ${size}; a session file has at most ${MAX_SESSION_FILE_CHARS} characters`, {
      path,
    });
  if (info.size > MAX_READ_BYTES) throw tooLarge(`${info.size} bytes`);
  const text = await readFile(path, 'utf8');
  if (text.length > MAX_SESSION_FILE_CHARS) throw tooLarge(`${text.length} characters`);
  const token = randomBytes(18).toString('base64url');
  return {
    urlPath: `${SESSION_FILE_PREFIX}/${token}`,
    name: basename(path)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 200),
    text,
  };
}

const sameToken = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** `GET /api/inspect-file/:token`: the served file for its own token, STUDIO_NOT_FOUND for any other. */
export function sessionFileHandler(file: ServedSessionFile | undefined) {
  return (c: Context): Response => {
    const token = c.req.param('token') ?? '';
    const expected = file ? file.urlPath.slice(SESSION_FILE_PREFIX.length + 1) : '';
    if (!file || !sameToken(token, expected))
      throw new StudioError('STUDIO_NOT_FOUND', 'no session file is served at this path; run flowing inspect FILE again');
    return new Response(file.text, {
      headers: {
        'Content-Type': 'application/x-ndjson; charset=utf-8',
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        'X-Flowing-File-Name': file.name,
      },
    });
  };
}
