import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlowSpecSchema, type FlowSpec } from '@flowing/spec';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The folder of machine `id`: `machines/<id>/` in the working directory, else in this package (as `flowing run` finds it). */
export function machineDir(machineId: string): string {
  const candidates = [...new Set([process.cwd(), PACKAGE_ROOT].map((root) => resolve(root, 'machines', machineId)))];
  return candidates.find((dir) => existsSync(join(dir, `${machineId}.machine.ts`))) ?? candidates[0]!;
}

/** The case files of a machine, sorted by name (none when it has no cases/ folder). */
export async function caseFiles(machineId: string): Promise<string[]> {
  const dir = join(machineDir(machineId), 'cases');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith('.case.jsonl'))
    .sort()
    .map((name) => join(dir, name));
}

/** The machine's spec, when its `<id>.flow.json` is there and valid (static findings need it). */
export async function readSpec(machineId: string): Promise<FlowSpec | undefined> {
  try {
    const text = await readFile(join(machineDir(machineId), `${machineId}.flow.json`), 'utf8');
    const parsed = FlowSpecSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a file whole or not at all (temporary file, then rename), creating its folder. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}
