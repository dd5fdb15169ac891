import { lstat, mkdir, realpath } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { MACHINE_ID_PATTERN, TOOL_NAME_PATTERN } from '@flowing/spec';
import { StudioError } from './errors.ts';
import { isInside, type ProjectRoots } from './roots.ts';

/** Suffixes the studio itself writes: specs under machines/, tool stubs under tools/. */
export const ALLOWED_SUFFIXES = { machines: '.flow.json', tools: '.ts' } as const;

/**
 * Checks one raw URL segment against an identifier pattern. Nothing is decoded first: an identifier never contains `%`,
 * `.`, `/`, `\` or NUL, so every traversal spelling (plain, percent-encoded, double-encoded, absolute) fails the pattern.
 */
export function checkSegment(raw: string, pattern: RegExp, what: string): string {
  if (raw.length > 64 || !pattern.test(raw)) {
    throw new StudioError('STUDIO_BAD_PATH', `${what} ${JSON.stringify(raw.slice(0, 80))} is not a plain identifier`, {
      segment: raw.slice(0, 80),
    });
  }
  return raw;
}

/** Validates a machine id from a URL segment (kebab-case). */
export function machineIdFrom(raw: string): string {
  return checkSegment(raw, MACHINE_ID_PATTERN, 'machine id');
}

/** Validates a tool name (snake_case); a bad one is STUDIO_BAD_NAME. */
export function toolNameFrom(value: unknown): string {
  if (typeof value !== 'string' || value.length > 64 || !TOOL_NAME_PATTERN.test(value)) {
    throw new StudioError(
      'STUDIO_BAD_NAME',
      `tool name ${JSON.stringify(String(value).slice(0, 80))} must be snake_case: a-z first, then a-z, 0-9, _`,
    );
  }
  return value;
}

/** Refuses a path that exists but resolves (through symlinks) outside `root`; returns whether it exists. */
async function checkReal(root: string, path: string): Promise<boolean> {
  try {
    await lstat(path);
  } catch {
    return false;
  }
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new StudioError('STUDIO_BAD_PATH', `${relative(root, path)} is a dangling symlink`);
  }
  if (!isInside(root, real)) throw new StudioError('STUDIO_BAD_PATH', `${relative(root, path)} leads outside ${root}`);
  return true;
}

/** The spec file of machine `id` (`machines/<id>/<id>.flow.json`), checked against symlinks leading out of machines/. */
export async function machineFile(roots: ProjectRoots, id: string): Promise<{ dir: string; file: string; exists: boolean }> {
  const dir = join(roots.machinesDir, id);
  const file = join(dir, `${id}${ALLOWED_SUFFIXES.machines}`);
  const dirExists = await checkReal(roots.machinesDir, dir);
  const exists = dirExists && (await checkReal(roots.machinesDir, file));
  if (exists && !(await lstat(await realpath(file))).isFile())
    throw new StudioError('STUDIO_BAD_PATH', `${id}${ALLOWED_SUFFIXES.machines} is not a regular file`);
  return { dir, file, exists };
}

/** Creates machines/ or a machine folder when missing (never through a symlink that leads out). */
export async function ensureDir(root: string, dir: string): Promise<void> {
  if (await checkReal(root, dir)) return;
  await mkdir(dir, { recursive: true });
}

/** The file of tool `name` (`tools/<name>.ts`), checked against symlinks leading out of tools/. */
export async function toolFile(roots: ProjectRoots, name: string): Promise<{ file: string; exists: boolean }> {
  const file = join(roots.toolsDir, `${name}${ALLOWED_SUFFIXES.tools}`);
  try {
    await lstat(file);
    return { file, exists: true };
  } catch {
    return { file, exists: false };
  }
}
