import { readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import {
  formatSpec,
  hasErrors,
  jsonNestingDepth,
  MACHINE_ID_PATTERN,
  parseSpecText,
  validateSpec,
  type FlowSpec,
  type SpecProblem,
} from '@flowing/spec';
import { MAX_JSON_DEPTH } from './body.ts';
import type { ToolCatalog } from '@flowing/codegen';
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
  const { problems } = parseSpecText(text, { tools: await context.tools(), resolveMachine: await invokedSpecs(context, parseLoose(text)) });
  return { id, file: projectPath(context, file), path: file, text, version: versionOf(bytes), problems };
}

/** The machine ids a spec's invokes name (`invoke: { machine }`), anywhere in its states. */
function invokedIds(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const item of value) invokedIds(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const machine = key === 'invoke' && item && typeof item === 'object' ? (item as { machine?: unknown }).machine : undefined;
      if (typeof machine === 'string') into.add(machine);
      invokedIds(item, into);
    }
  }
  return into;
}

/**
 * The specs of the machines `spec` invokes, transitively, read from machines/ the way every spec is read here: a
 * budget counts what its child machines cost (as `flowing validate` does), so a spec within its budget is not refused.
 */
async function invokedSpecs(context: StudioContext, spec: unknown): Promise<(machineId: string) => FlowSpec | undefined> {
  const found = new Map<string, FlowSpec>();
  const pending = [...invokedIds(spec, new Set())];
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (found.has(id) || !MACHINE_ID_PATTERN.test(id)) continue;
    const { file, exists } = await machineFile(context.roots, id).catch(() => ({ file: '', exists: false }));
    const bytes = exists ? await readIfExists(file) : undefined;
    const child = bytes === undefined ? undefined : parseSpecText(bytes.toString('utf8')).spec;
    if (!child) continue;
    found.set(id, child);
    pending.push(...invokedIds(child, new Set()));
  }
  return (machineId) => found.get(machineId);
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

/** The validator's problems of an edited spec of machine `id` (400 STUDIO_ID_MISMATCH when `spec.id` is another). */
export async function specProblems(
  context: StudioContext,
  id: string,
  spec: Record<string, unknown>,
  tools?: ToolCatalog,
): Promise<SpecProblem[]> {
  if (spec.id !== id) {
    throw new StudioError('STUDIO_ID_MISMATCH', `spec.id ${JSON.stringify(spec.id)} differs from the machine in the URL (${id})`, { id });
  }
  return validateSpec(spec, { tools: tools ?? (await context.tools()), resolveMachine: await invokedSpecs(context, spec) }).problems;
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
  const problems = await specProblems(context, id, body.spec);
  if (hasErrors(problems) && !body.draft) {
    throw new StudioError(
      'STUDIO_SPEC_INVALID',
      `the spec has ${problems.filter((p) => p.severity === 'error').length} error(s); fix them or save as a draft`,
      { problems },
    );
  }
  const text = formatSpec(body.spec);
  const saved = await context.serial(`machine:${id}`, () => storeSpec(context, id, text, body.baseVersion));
  return { version: saved.version, problems, ...(await strandingOf(context, id, saved.before, body.spec)) };
}

/** The states an edit removes in which sessions of the connected runtime wait (`stranded`), and a warning naming them. */
export async function strandingOf(context: StudioContext, id: string, before: unknown, spec: Record<string, unknown>) {
  const stranded = await strandedBy(id, before, spec, context.runtimeStates);
  const warning = strandingWarning(stranded);
  return { stranded, ...(warning ? { warning } : {}) };
}

/**
 * Refuses with 409 STUDIO_CONFLICT unless `machines/<id>/<id>.flow.json` is at `baseVersion` (null: it must not exist
 * yet). Call it inside the machine's queue, before any write that depends on it.
 */
export async function assertSpecAt(context: StudioContext, id: string, baseVersion: string | null) {
  const { dir, file, exists } = await machineFile(context.roots, id);
  const current = exists ? await readIfExists(file) : undefined;
  const currentVersion = current === undefined ? null : versionOf(current);
  if (currentVersion !== baseVersion) {
    const message =
      baseVersion === null
        ? `machine ${id} already exists; load it instead of creating it`
        : `machines/${id}/${id}.flow.json changed on disk since it was loaded; reload it (your edits are not saved)`;
    throw new StudioError('STUDIO_CONFLICT', message, { currentVersion });
  }
  return { dir, file, current };
}

/**
 * Writes a spec's text atomically if the file is at `baseVersion` (see assertSpecAt); answers the new version and the
 * spec it replaced (parsed loosely; undefined for a new machine).
 */
export async function storeSpec(
  context: StudioContext,
  id: string,
  text: string,
  baseVersion: string | null,
): Promise<{ version: string; before: unknown }> {
  const { dir, file, current } = await assertSpecAt(context, id, baseVersion);
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
    return { version: versionOf(text), before: undefined };
  }
  await writeAtomic(file, text);
  return { version: versionOf(text), before: parseLoose(current.toString('utf8')) };
}
