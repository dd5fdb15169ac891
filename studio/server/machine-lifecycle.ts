import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { newSpecSkeleton } from '@flowing/codegen';
import { formatSpec, MACHINE_ID_PATTERN, validateSpec, type FlowSpec } from '@flowing/spec';
import type { StudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { createAtomic, readIfExists, versionOf } from './files.ts';
import { projectPath } from './machines.ts';
import { ensureDir, machineFile } from './paths.ts';

/** Longest machine id (the validator's limit for every name). */
export const MAX_MACHINE_ID_LENGTH = 64;
/** The state a new machine starts in. */
export const NEW_MACHINE_INITIAL_STATE = 'idle';
/** Files codegen writes next to a spec; a delete removes them with the spec. `<id>.impl.ts` is hand-written and kept. */
const GENERATED_SUFFIXES = ['.machine.ts', '.registry.ts'] as const;

/** The spec "New machine" writes: one initial state, placed so the editor needs no layout pass. */
export function newMachineSpec(id: string): FlowSpec {
  return { ...newSpecSkeleton(id, NEW_MACHINE_INITIAL_STATE), layout: { [NEW_MACHINE_INITIAL_STATE]: { x: 0, y: 0 } } };
}

/**
 * Checks a new machine id: a kebab-case string of at most 64 characters (checked here, since the id becomes a path),
 * then whatever the CLI's validator says about `/id` (reserved names such as `class` or `constructor`).
 * Throws 400 STUDIO_BAD_MACHINE_ID with the spec code in `problem`.
 */
export function checkNewMachineId(value: unknown): string {
  const shown = JSON.stringify(String(value).slice(0, 80));
  const refuse = (problem: string, message: string): never => {
    throw new StudioError('STUDIO_BAD_MACHINE_ID', message, { problem, id: String(value).slice(0, 80) });
  };
  if (typeof value !== 'string' || value.length === 0)
    return refuse('SPEC_INVALID_ID', 'send { id } with the new machine id, e.g. order-support');
  if (value.length > MAX_MACHINE_ID_LENGTH)
    return refuse('SPEC_INVALID_ID', `machine id ${shown} is longer than ${MAX_MACHINE_ID_LENGTH} characters`);
  if (!MACHINE_ID_PATTERN.test(value))
    return refuse(
      'SPEC_INVALID_ID',
      `machine id ${shown} must be kebab-case: a-z first, then a-z, 0-9 and single dashes, e.g. order-support`,
    );
  const idProblem = validateSpec(newMachineSpec(value)).problems.find((p) => p.severity === 'error' && p.path === '/id');
  if (idProblem) return refuse(idProblem.code, idProblem.message);
  return value;
}

/**
 * "New machine": writes `machines/<id>/<id>.flow.json` with one initial state. Refuses an id that is already a machine
 * with 409 STUDIO_MACHINE_EXISTS (never overwrites); a folder left behind without a spec (a kept impl.ts) is reused.
 */
export async function createMachine(context: StudioContext, body: unknown) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new StudioError('STUDIO_BAD_REQUEST', 'send { id }');
  const id = checkNewMachineId((body as Record<string, unknown>).id);
  const spec = newMachineSpec(id);
  const text = formatSpec(spec);
  return context.serial(`machine:${id}`, async () => {
    const { dir, file, exists } = await machineFile(context.roots, id);
    const exists409 = () =>
      new StudioError('STUDIO_MACHINE_EXISTS', `machine ${id} already exists (machines/${id}/${id}.flow.json); open it instead`, { id });
    if (exists) throw exists409();
    await ensureDir(context.roots.rootDir, context.roots.machinesDir);
    await ensureDir(context.roots.machinesDir, dir);
    try {
      await createAtomic(file, text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw exists409();
      throw error;
    }
    return { id, file: projectPath(context, file), version: versionOf(text), spec };
  });
}

function deleteBody(body: unknown): string {
  const baseVersion = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).baseVersion : undefined;
  if (typeof baseVersion !== 'string' || !/^[0-9a-f]{64}$/.test(baseVersion)) {
    throw new StudioError('STUDIO_BAD_REQUEST', 'send { baseVersion }: the version the spec was loaded at (sha256 hex)');
  }
  return baseVersion;
}

async function removeIfFile(path: string): Promise<boolean> {
  try {
    if (!(await lstat(path)).isFile()) return false;
  } catch {
    return false;
  }
  await unlink(path);
  return true;
}

/**
 * "Delete machine": removes the spec and its generated files (`<id>.machine.ts`, `<id>.registry.ts`), refusing with
 * 409 STUDIO_CONFLICT when the spec changed on disk since `baseVersion`. Hand-written files in the folder (`<id>.impl.ts`,
 * cases) are kept and listed in `kept`; the folder is removed only when nothing is left in it.
 */
export async function deleteMachine(context: StudioContext, id: string, body: unknown) {
  const baseVersion = deleteBody(body);
  // The codegen queue first, then the file's: a generation of this machine never writes files back after the delete.
  return context.serial('codegen', () =>
    context.serial(`machine:${id}`, async () => {
      const { dir, file, exists } = await machineFile(context.roots, id);
      const current = exists ? await readIfExists(file) : undefined;
      if (current === undefined) throw new StudioError('STUDIO_NOT_FOUND', `no machine ${id} (machines/${id}/${id}.flow.json)`, { id });
      const currentVersion = versionOf(current);
      if (currentVersion !== baseVersion) {
        throw new StudioError(
          'STUDIO_CONFLICT',
          `machines/${id}/${id}.flow.json changed on disk since it was loaded; reload it before deleting`,
          { currentVersion },
        );
      }
      const removed: string[] = [];
      // Generated files first, the spec last: an interrupted delete leaves a spec that `flowing codegen` can complete.
      for (const suffix of GENERATED_SUFFIXES) {
        const path = join(dir, `${id}${suffix}`);
        if (await removeIfFile(path)) removed.push(projectPath(context, path));
      }
      await unlink(file);
      removed.push(projectPath(context, file));
      const kept = (await readdir(dir)).sort().map((name) => projectPath(context, join(dir, name)));
      if (kept.length === 0) await rmdir(dir).catch(() => undefined);
      return { id, removed, kept };
    }),
  );
}
