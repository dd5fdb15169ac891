import { createHash, randomBytes } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The conflict token of a file: sha256 hex of its bytes. */
export function versionOf(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Reads a file's bytes, or undefined when it does not exist. */
export async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function writeTemp(file: string, text: string): Promise<string> {
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o644);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** Replaces `file` atomically: readers see the old bytes or the new ones, never half a file. */
export async function writeAtomic(file: string, text: string): Promise<void> {
  const temp = await writeTemp(file, text);
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** Creates `file` atomically, failing with EEXIST when it already exists (a hard link never replaces a file). */
export async function createAtomic(file: string, text: string): Promise<void> {
  const temp = await writeTemp(file, text);
  try {
    await link(temp, file);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Runs tasks one after another per key, so a check-then-write on one file is never interleaved with another. */
export function createKeyedQueue(): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return next;
  };
}
