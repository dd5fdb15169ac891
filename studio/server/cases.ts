import { lstat, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { StudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { createAtomic, writeAtomic } from './files.ts';
import { ensureDir, machineFile } from './paths.ts';
import { isInside } from './roots.ts';

/** A case name: what the runtime's `GET /sessions/:id/case?name=` accepts, and the file name before `.case.jsonl`. */
export const CASE_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** The suffix of a recorded case under `machines/<id>/cases/`. */
export const CASE_SUFFIX = '.case.jsonl';

/** What a save answers: the project path written and whether a file was there before. */
export interface SavedCase {
  file: string;
  replaced: boolean;
}

/**
 * Checks a case text before it is saved: throws an error with a `CASE_*` code (a line that is not a case, a case of
 * another machine, ...). The studio does not read cases itself; `flowing studio` passes the runtime's parser.
 */
export type CaseChecker = (text: string, machineId: string, shownPath: string) => void | Promise<void>;

/** Validates a case name from a URL segment (400 STUDIO_BAD_NAME). */
export function caseNameFrom(raw: string): string {
  if (!CASE_NAME_PATTERN.test(raw)) {
    throw new StudioError(
      'STUDIO_BAD_NAME',
      `case name ${JSON.stringify(raw.slice(0, 80))} must be 1-64 characters of a-z, 0-9, _ and -, starting with a letter or digit`,
    );
  }
  return raw;
}

/** Checks `{ text, replace? }` (400 STUDIO_BAD_REQUEST). */
export function saveCaseBody(body: unknown): { text: string; replace: boolean } {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new StudioError('STUDIO_BAD_REQUEST', 'send { text, replace? } with the case file text');
  const { text, replace } = body as Record<string, unknown>;
  if (typeof text !== 'string' || text.trim() === '')
    throw new StudioError('STUDIO_BAD_REQUEST', '`text` must be the case file (JSON lines) as a string');
  if (replace !== undefined && typeof replace !== 'boolean') throw new StudioError('STUDIO_BAD_REQUEST', '`replace` must be a boolean');
  return { text, replace: replace === true };
}

/** The machine's folder, which must hold its spec (404 STUDIO_NOT_FOUND; a symlink leading out is STUDIO_BAD_PATH). */
async function machineDir(context: StudioContext, id: string): Promise<string> {
  const { dir, exists } = await machineFile(context.roots, id);
  if (!exists) throw new StudioError('STUDIO_NOT_FOUND', `no machine ${id} (machines/${id}/${id}.flow.json)`, { id });
  return dir;
}

/** Whether `machines/<id>/cases` exists; refused (STUDIO_BAD_PATH) when it resolves outside machines/ or is no folder. */
async function casesDirExists(context: StudioContext, dir: string, id: string): Promise<boolean> {
  try {
    await lstat(dir);
  } catch {
    return false;
  }
  const real = await realpath(dir).catch(() => {
    throw new StudioError('STUDIO_BAD_PATH', `machines/${id}/cases is a dangling symlink`);
  });
  if (!isInside(context.roots.machinesDir, real)) throw new StudioError('STUDIO_BAD_PATH', `machines/${id}/cases leads outside machines/`);
  if (!(await lstat(real)).isDirectory()) throw new StudioError('STUDIO_BAD_PATH', `machines/${id}/cases is not a folder`);
  return true;
}

/** The kind of entry at `file`: none, a regular file, or anything else (a symlink, a folder), never followed. */
async function entryAt(file: string): Promise<'none' | 'file' | 'other'> {
  try {
    return (await lstat(file)).isFile() ? 'file' : 'other';
  } catch {
    return 'none';
  }
}

/**
 * `GET /api/machines/:id/cases`: the names of the machine's recorded cases (`machines/<id>/cases/<name>.case.jsonl`,
 * regular files only), sorted; an empty list when it has no cases/ folder.
 */
export async function listCases(context: StudioContext, id: string): Promise<string[]> {
  const dir = join(await machineDir(context, id), 'cases');
  if (!(await casesDirExists(context, dir, id))) return [];
  const names: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(CASE_SUFFIX)) continue;
    const name = entry.name.slice(0, -CASE_SUFFIX.length);
    if (CASE_NAME_PATTERN.test(name)) names.push(name);
  }
  return names.sort();
}

/**
 * `PUT /api/machines/:id/cases/:name`: writes a recorded case as `machines/<id>/cases/<name>.case.jsonl`. The text must
 * pass the context's case checker as a case of machine `id` (400 STUDIO_CASE_INVALID, `details.problem` its CASE_* code,
 * the one `flowing test` would show; 503 STUDIO_CASES_UNAVAILABLE
 * without a checker); an existing file is 409
 * STUDIO_CASE_EXISTS unless `replace`. Written atomically (temporary file, then link or rename), never through a
 * symlink: a cases/ folder leading out of machines/, or a case file that is a symlink, is 400 STUDIO_BAD_PATH.
 * @example await saveCase(context, 'order-support', 'refund-approved', { text, replace: false })
 */
export async function saveCase(
  context: StudioContext,
  id: string,
  name: string,
  body: { text: string; replace: boolean },
): Promise<SavedCase> {
  const shown = `machines/${id}/cases/${name}${CASE_SUFFIX}`;
  if (!context.checkCase) {
    throw new StudioError(
      'STUDIO_CASES_UNAVAILABLE',
      'this studio was started without a case checker, so it cannot save cases; start it with `flowing studio`',
    );
  }
  try {
    await context.checkCase(body.text, id, shown);
  } catch (error) {
    const coded = error as { code?: unknown; message?: unknown };
    if (typeof coded.code === 'string' && coded.code.startsWith('CASE_'))
      throw new StudioError('STUDIO_CASE_INVALID', String(coded.message), { problem: coded.code });
    throw error;
  }
  return context.serial(`case:${id}/${name}`, async () => {
    const dir = join(await machineDir(context, id), 'cases');
    const file = join(dir, `${name}${CASE_SUFFIX}`);
    if (!(await casesDirExists(context, dir, id))) await ensureDir(context.roots.machinesDir, dir);
    const entry = await entryAt(file);
    if (entry === 'other')
      throw new StudioError(
        'STUDIO_BAD_PATH',
        `${shown} is not a regular file (a symlink or a folder); the studio never writes through one`,
      );
    if (entry === 'file' && !body.replace) {
      throw new StudioError('STUDIO_CASE_EXISTS', `${shown} already exists; save it with replace to overwrite it, or choose another name`, {
        file: shown,
      });
    }
    if (entry === 'none') {
      try {
        await createAtomic(file, body.text);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        throw new StudioError('STUDIO_CASE_EXISTS', `${shown} was created meanwhile; save it with replace to overwrite it`, {
          file: shown,
        });
      }
    } else {
      await writeAtomic(file, body.text);
    }
    return { file: shown, replaced: entry === 'file' };
  });
}
