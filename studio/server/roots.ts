import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';

/** The only directories the studio API reads specs from and writes to, as real paths. */
export interface ProjectRoots {
  rootDir: string;
  machinesDir: string;
  toolsDir: string;
}

async function realOrJoin(base: string, name: string): Promise<string> {
  const path = join(base, name);
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}

/** Resolves the project's allowed roots once, at start-up, following a symlinked rootDir the user chose. */
export async function resolveRoots(rootDir: string): Promise<ProjectRoots> {
  const root = await realpath(rootDir);
  return { rootDir: root, machinesDir: await realOrJoin(root, 'machines'), toolsDir: await realOrJoin(root, 'tools') };
}

/** True when `path` is strictly inside `root` (a sibling such as `<root>-evil` is outside). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
