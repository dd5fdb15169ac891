// `flowing inspect FILE` serves the file to the studio page; its size is held to the parser's one limit, counted in
// characters like the parser counts them, so the server never refuses a file the app would read, nor serves one it
// would refuse.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SESSION_FILE_CHARS } from '@flowing/protocol';
import { loadServedSessionFile } from '@flowing/studio/server';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-served-file-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadServedSessionFile', () => {
  it('serves a file larger than MAX_SESSION_FILE_CHARS in bytes whose characters are within it', async () => {
    const path = join(dir, 'accented.flowing.jsonl');
    const text = 'é'.repeat(MAX_SESSION_FILE_CHARS / 2 + 1);
    await writeFile(path, text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_SESSION_FILE_CHARS);
    const served = await loadServedSessionFile(path);
    expect(served.text.length).toBe(text.length);
  });

  it('refuses a file of one character more than MAX_SESSION_FILE_CHARS with STUDIO_BODY_TOO_LARGE', async () => {
    const path = join(dir, 'long.flowing.jsonl');
    await writeFile(path, 'a'.repeat(MAX_SESSION_FILE_CHARS + 1));
    await expect(loadServedSessionFile(path)).rejects.toMatchObject({ code: 'STUDIO_BODY_TOO_LARGE', details: { path } });
  });
});
