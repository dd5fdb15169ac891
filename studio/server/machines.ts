import { readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import { formatSpec, hasErrors, jsonNestingDepth, MACHINE_ID_PATTERN, parseSpecText, validateSpec, type SpecProblem } from '@flowing/spec';
import { MAX_JSON_DEPTH } from './body.ts';
import type { StudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { createAtomic, readIfExists, versionOf, writeAtomic } from './files.ts';
import { ensureDir, machineFile } from './paths.ts';
import { strandedBy, strandingWarning, type StrandedState } from './stranding.ts';

/** One machine as the list shows it. */
export interface MachineSummary {
  id: string;
  file: string;
  version: string;
  problems: SpecProblem[];
}

/** A path relative to the project root, with forward slashes. */
export function projectPath(context: StudioContext, file: string): string {
  return relative(context.roots.rootDir, file).split('\\').join('/');
}

/** Parses a spec file's text for the editor: the JSON value, or null when it is not JSON (or too deep). */
export function parseLoose(text: string): unknown {
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Loads `machines/<id>/<id>.flow.json` with its version and problems (404 STUDIO_NOT_FOUND when there is none). */
export async function loadMachine(context: StudioContext, id: string) {
  const { file, exists } = await machineFile(context.roots, id);
  const bytes = exists ? await readIfExists(file) : undefined;
  if (bytes === undefined) throw new StudioError('STUDIO_NOT_FOUND', `no machine ${id} (machines/${id}/${id}.flow.json)`, { id });
  const text = bytes.toString('utf8');
  const { problems } = parseSpecText(text, { tools: await context.tools() });
  return { id, file: projectPath(context, file), path: file, text, version: versionOf(bytes), problems };
}

/** Every machine of machines/ (folders holding `<id>.flow.json` inside machines/), sorted by id. */
export async function listMachines(context: StudioContext): Promise<MachineSummary[]> {
  let names: string[];
  try {
    names = await readdir(context.roots.machinesDir);
  } catch {
    return [];
  }
  const machines: MachineSummary[] = [];
  for (const name of names.sort()) {
    if (!MACHINE_ID_PATTERN.test(name)) continue;
    try {
      const { id, file, version, problems } = await loadMachine(context, name);
      machines.push({ id, file, version, problems });
    } catch (error) {
      // A folder without a spec, or one whose symlink leads out of machines/, is not a machine.
      if (!(error instanceof StudioError)) throw error;
    }
  }
  return machines;
}

export interface SaveBody {
  spec: Record<string, unknown>;
  baseVersion: string | null;
  draft: boolean;
}

/** Checks the body of a save: `{ spec, baseVersion, draft? }` (400 STUDIO_BAD_REQUEST). */
export function saveBody(body: unknown): SaveBody {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new StudioError('STUDIO_BAD_REQUEST', 'send { spec, baseVersion, draft? }');
  const { spec, baseVersion, draft } = body as Record<string, unknown>;
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new StudioError('STUDIO_BAD_REQUEST', '`spec` must be a JSON object');
  if (baseVersion !== null && (typeof baseVersion !== 'string' || !/^[0-9a-f]{64}$/.test(baseVersion))) {
    throw new StudioError(
      'STUDIO_BAD_REQUEST',
      '`baseVersion` must be the version the spec was loaded at (sha256 hex), or null to create a machine',
    );
  }
  if (draft !== undefined && typeof draft !== 'boolean') throw new StudioError('STUDIO_BAD_REQUEST', '`draft` must be a boolean');
  return { spec: spec as Record<string, unknown>, baseVersion, draft: draft === true };
}

/**
 * Saves a spec: refused with 422 unless valid or a draft, and with 409 STUDIO_CONFLICT when the file is not at
 * `baseVersion` (null: it must not exist yet). Written atomically. When the edit removes states in which sessions of
 * the connected runtime wait, the answer names them (`stranded`) and says so (`warning`); the save goes ahead.
 */
export async function saveMachine(
  context: StudioContext,
  id: string,
  body: SaveBody,
): Promise<{ version: string; problems: SpecProblem[]; stranded: StrandedState[]; warning?: string }> {
  if (body.spec.id !== id) {
    throw new StudioError('STUDIO_ID_MISMATCH', `spec.id ${JSON.stringify(body.spec.id)} differs from the machine in the URL (${id})`, {
      id,
    });
  }
  const { problems } = validateSpec(body.spec, { tools: await context.tools() });
  if (hasErrors(problems) && !body.draft) {
    throw new StudioError(
      'STUDIO_SPEC_INVALID',
      `the spec has ${problems.filter((p) => p.severity === 'error').length} error(s); fix them or save as a draft`,
      { problems },
    );
  }
  const text = formatSpec(body.spec);
  let before: unknown;
  const saved = await context.serial(`machine:${id}`, async () => {
    const { dir, file, exists } = await machineFile(context.roots, id);
    const current = exists ? await readIfExists(file) : undefined;
    const currentVersion = current === undefined ? null : versionOf(current);
    if (currentVersion !== body.baseVersion) {
      const message =
        body.baseVersion === null
          ? `machine ${id} already exists; load it instead of creating it`
          : `machines/${id}/${id}.flow.json changed on disk since it was loaded; reload it (your edits are not saved)`;
      throw new StudioError('STUDIO_CONFLICT', message, { currentVersion });
    }
    if (current === undefined) {
      await ensureDir(context.roots.rootDir, context.roots.machinesDir);
      await ensureDir(context.roots.machinesDir, dir);
      try {
        await createAtomic(file, text);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        throw new StudioError('STUDIO_CONFLICT', `machine ${id} was created by someone else meanwhile; reload it`, {
          currentVersion: versionOf((await readIfExists(file)) ?? ''),
        });
      }
    } else {
      before = parseLoose(current.toString('utf8'));
      await writeAtomic(file, text);
    }
    return { version: versionOf(text), problems };
  });
  const stranded = await strandedBy(id, before, body.spec, context.runtimeStates);
  const warning = strandingWarning(stranded);
  return { ...saved, stranded, ...(warning ? { warning } : {}) };
}

/** Runs codegen on a saved, valid spec and writes the generated files (422 STUDIO_SPEC_INVALID on errors). */
export async function generateMachine(context: StudioContext, id: string) {
  // Under the codegen queue from the first read, so a delete of the machine never interleaves with its generation.
  return context.serial('codegen', async () => {
    const machine = await loadMachine(context, id);
    if (hasErrors(machine.problems)) {
      throw new StudioError('STUDIO_SPEC_INVALID', `machines/${id}/${id}.flow.json has errors; codegen runs only on a valid spec`, {
        problems: machine.problems,
      });
    }
    const tools = await context.tools();
    const codegen = await context.codegen();
    const result = await codegen.generate(machine.path, { write: true, tools });
    return { ok: result.ok, files: result.files, problems: result.problems, timings: result.timings, scaffolded: result.scaffolded };
  });
}
