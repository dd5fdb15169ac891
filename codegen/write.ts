import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes through a temporary file and a rename, so a crash never leaves a half-written file. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(temp, text);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Writes a set of files all or nothing: when one write fails, the files written before it get their previous text
 * back (or are removed when they did not exist), and the error is rethrown.
 */
export async function writeAll(files: ReadonlyArray<{ path: string; text: string }>): Promise<void> {
  const done: Array<{ path: string; previous: string | undefined }> = [];
  try {
    for (const file of files) {
      const previous = await readFile(file.path, 'utf8').catch(() => undefined);
      await writeFileAtomic(file.path, file.text);
      done.push({ path: file.path, previous });
    }
  } catch (error) {
    for (const { path, previous } of done.reverse()) {
      await (previous === undefined ? rm(path, { force: true }) : writeFileAtomic(path, previous)).catch(() => undefined);
    }
    throw error;
  }
}
