import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/**
 * Files whose module format follows package.json's `"type"` (`.mjs`, `.cjs`, `.mts` and `.cts` say theirs in the
 * name): switching the type changes how Node, tsx and tsc read them.
 */
const TYPED_BY_PACKAGE = /\.(?:js|jsx|ts|tsx)$/;
/** Folders that hold no code of the project's own. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'build', 'out', 'coverage']);
/** Past this many folder entries the answer is "has code": a large folder is never switched on a guess. */
const MAX_ENTRIES = 20_000;

/**
 * The first file of the project's own (outside node_modules, build output and hidden folders) whose meaning depends
 * on package.json's `"type"`, or undefined when there is none: then switching the project to ES modules changes
 * nothing that exists. `ignore` says which relative paths not to count.
 * @example await codeDependingOnType(root, () => false) // 'src/index.ts', or undefined in a new `npm init -y` folder
 */
export async function codeDependingOnType(root: string, ignore: (path: string) => boolean): Promise<string | undefined> {
  let seen = 0;
  const queue = [root];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (++seen > MAX_ENTRIES) return `${relative(root, dir) || '.'} (more than ${MAX_ENTRIES} entries)`;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !SKIPPED_FOLDERS.has(entry.name)) queue.push(path);
      } else if (TYPED_BY_PACKAGE.test(entry.name)) {
        const rel = relative(root, path).split('\\').join('/');
        if (!ignore(rel)) return rel;
      }
    }
  }
  return undefined;
}

/** The package.json `machines/` and `tools/` get in a project whose own code stays CommonJS. */
export const ESM_FOLDER_PACKAGE = '{\n  "type": "module"\n}\n';
/** The folders holding generated machines and tool modules, ES modules in every project. */
export const ESM_FOLDERS = ['machines', 'tools'] as const;
