import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FlowingError, type AnyMigrationHook } from '@flowing/runtime';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The `migrate` export of each machine's hand-written `machines/<id>/<id>.impl.ts` (the working directory's first,
 * then this package's), by machine id. A machine without one has no hook. Throws MIGRATION_HOOK_INVALID naming the
 * file and the field when the export is not a hook.
 */
export async function loadMigrationHooks(machineIds: readonly string[]): Promise<Record<string, AnyMigrationHook>> {
  const hooks: Record<string, AnyMigrationHook> = {};
  for (const id of machineIds) {
    const file = [process.cwd(), PACKAGE_ROOT]
      .map((root) => resolve(root, 'machines', id, `${id}.impl.ts`))
      .find((path) => existsSync(path));
    if (!file) continue;
    const module = (await import(pathToFileURL(file).href)) as { migrate?: unknown };
    if (module.migrate === undefined) continue;
    hooks[id] = checkHook(module.migrate, `machines/${id}/${id}.impl.ts`);
  }
  return hooks;
}

function checkHook(value: unknown, where: string): AnyMigrationHook {
  const invalid = (what: string) => new FlowingError('MIGRATION_HOOK_INVALID', `the \`migrate\` export of ${where} ${what}`);
  if (value === null || typeof value !== 'object') throw invalid('is not an object (defineMigration({ states, context }))');
  const hook = value as Record<string, unknown>;
  const versions = hook.fromVersion;
  if (versions !== undefined && typeof versions !== 'string' && !(Array.isArray(versions) && versions.every((v) => typeof v === 'string')))
    throw invalid('has a fromVersion that is neither a spec hash nor a list of them');
  if (hook.states !== undefined) {
    if (hook.states === null || typeof hook.states !== 'object') throw invalid('has states that are not an object of old path to new path');
    for (const [from, to] of Object.entries(hook.states))
      if (typeof to !== 'string') throw invalid(`maps state '${from}' to a ${typeof to}, not a path`);
  }
  if (hook.context !== undefined && typeof hook.context !== 'function') throw invalid('has a context that is not a function');
  return hook as AnyMigrationHook;
}
