import { createHash } from 'node:crypto';
import { cp, lstat, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { createCodegen, type Codegen } from '../../codegen/index.ts';

/** The repository root. */
export const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A throwaway copy of the project files users edit (machines/, tools/) in a temporary folder that still resolves
 * `zod`, `xstate` and `flowing/runtime` like the repository does, so tests never dirty the repository.
 */
export async function copyProject(prefix = 'flowing-project-'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await cp(join(REPO_DIR, 'machines'), join(dir, 'machines'), { recursive: true });
  await cp(join(REPO_DIR, 'tools'), join(dir, 'tools'), { recursive: true });
  for (const name of ['node_modules', 'spec', 'runtime', 'codegen', 'bin']) await symlink(join(REPO_DIR, name), join(dir, name), 'dir');
  for (const name of ['package.json', 'tsconfig.json', 'tsconfig.base.json'])
    await writeFile(join(dir, name), await readFile(join(REPO_DIR, name)));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Reads a JSON file, lets `edit` change it, writes it back (2-space JSON); returns the text it had before. */
export async function editJsonFile(path: string, edit: (value: any) => void): Promise<string> {
  const before = await readFile(path, 'utf8');
  const value = JSON.parse(before);
  edit(value);
  await writeFile(path, JSON.stringify(value, null, 2));
  return before;
}

/**
 * A project copy and one code generator over it for the tests of a file: made before the first test, disposed and
 * removed after the last. Read `dir` and `codegen` inside tests (they exist once the hook has run).
 */
export function useCodegenProject(prefix?: string): { readonly dir: string; readonly codegen: Codegen } {
  let project: Awaited<ReturnType<typeof copyProject>> | undefined;
  let codegen: Codegen | undefined;
  beforeAll(async () => {
    project = await copyProject(prefix);
    codegen = createCodegen({ rootDir: project.dir });
  });
  afterAll(async () => {
    codegen?.dispose();
    await project?.remove();
  });
  return {
    get dir() {
      return project!.dir;
    },
    get codegen() {
      return codegen!;
    },
  };
}

/**
 * Hashes every file and symlink under `root` (symlinks are not followed): what a refused request must leave alone.
 * @example const before = await treeHashes(dir); ...; expect(await treeHashes(dir)).toEqual(before);
 */
export async function treeHashes(root: string, dir = root, into = new Map<string, string>()): Promise<Map<string, string>> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const stat = await lstat(path);
    const rel = relative(root, path);
    if (stat.isSymbolicLink()) into.set(rel, `link:${await readlink(path)}`);
    else if (stat.isDirectory()) await treeHashes(root, path, into);
    else
      into.set(
        rel,
        createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      );
  }
  return into;
}
