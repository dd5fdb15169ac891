import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './write.ts';

/** How one file the check read looked: a hash of its text (project files) or its size and mtime (node_modules). */
type Fingerprint = [path: string, stamp: string];

interface CacheFile {
  version: 1;
  /** Key of a set of checked files -> the files the clean check read, oldest entry first. */
  clean: Record<string, Fingerprint[]>;
}

const CACHE_VERSION = 1;
/** Enough for every machine of a project and a few edits of each; older entries are dropped first. */
const MAX_ENTRIES = 64;
/** Where `flowing codegen` keeps what it has type-checked clean, across processes (like other tools' caches). */
export const CHECK_CACHE_FILE = 'node_modules/.cache/flowing/type-check.json';

/**
 * Remembers generated code that type-checked without a problem, with a fingerprint of every file that check read
 * (tools, impl, the packages' declarations, the tsconfig), so the same code is not checked again while none of them
 * changed: Generate after the studio's live check, or `flowing codegen` run again on an unchanged project. Only clean
 * results are kept: code with errors is always checked again, so an error can never outlive its cause (a file
 * created meanwhile that an import could not find, a package installed since).
 */
export class CheckCache {
  private readonly clean = new Map<string, Fingerprint[]>();
  private loaded: Promise<void> | undefined;

  /** @param file the cache file, or undefined to keep it in memory only. */
  constructor(private readonly file: string | undefined) {}

  /** The key of one check: what is checked, how (compiler options, versions) and the project's configuration files. */
  static key(parts: readonly string[]): string {
    const hash = createHash('sha256');
    for (const part of parts) hash.update(`${part.length}:${part}`);
    return hash.digest('hex');
  }

  /** True when these files were checked clean and none of the files that check read has changed since. */
  async isClean(key: string): Promise<boolean> {
    await this.load();
    const fingerprints = this.clean.get(key);
    return fingerprints !== undefined && fingerprints.every(([path, stamp]) => stampOf(path) === stamp);
  }

  /** Records a clean check of `key` that read `dependencies` (absolute paths). */
  async remember(key: string, dependencies: readonly string[]): Promise<void> {
    await this.load();
    this.clean.delete(key);
    this.clean.set(
      key,
      dependencies.map((path): Fingerprint => [path, stampOf(path)]),
    );
    while (this.clean.size > MAX_ENTRIES) this.clean.delete(this.clean.keys().next().value!);
    if (!this.file) return;
    const data: CacheFile = { version: CACHE_VERSION, clean: Object.fromEntries(this.clean) };
    // A cache that cannot be written (read-only node_modules) only costs the next run a check.
    await writeFileAtomic(this.file, JSON.stringify(data)).catch(() => undefined);
  }

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      if (!this.file) return;
      const text = await readFile(this.file, 'utf8').catch(() => undefined);
      if (text === undefined) return;
      try {
        const data = JSON.parse(text) as CacheFile;
        if (data.version !== CACHE_VERSION) return;
        for (const [key, fingerprints] of Object.entries(data.clean)) this.clean.set(key, fingerprints);
      } catch {
        // A damaged cache file is as good as none.
      }
    })();
    return this.loaded;
  }
}

/** The cache file of a project, when it has a node_modules folder to keep it in. */
export function checkCacheFile(rootDir: string): string | undefined {
  try {
    return statSync(join(rootDir, 'node_modules')).isDirectory() ? join(rootDir, CHECK_CACHE_FILE) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Package files change only by an install, which rewrites them (a new mtime); a project file may be rewritten within
 * the same millisecond with the same size, so its text is hashed.
 */
function stampOf(path: string): string {
  try {
    if (path.includes('/node_modules/')) {
      const info = statSync(path);
      return `${info.size}:${info.mtimeMs}`;
    }
    return createHash('sha256').update(readFileSync(path)).digest('base64');
  } catch {
    return 'missing';
  }
}
