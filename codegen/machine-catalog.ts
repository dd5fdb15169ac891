import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSpecText, type FlowSpec } from '@flowing/spec';

/** Every `machines/*\/*.flow.json` under the root, sorted. */
export async function findSpecFiles(rootDir: string): Promise<string[]> {
  const machines = join(rootDir, 'machines');
  const dirs = await readdir(machines, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const dir of dirs
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()) {
    for (const file of (await readdir(join(machines, dir))).sort()) {
      if (file.endsWith('.flow.json')) files.push(`machines/${dir}/${file}`);
    }
  }
  return files;
}

/** The project's machines by id: the specs that parse (a broken one is reported when it is validated itself). */
export type MachineCatalog = Record<string, FlowSpec>;

/** Reads every machine spec of the project, for checking and typing machine invokes. */
export async function loadMachineCatalog(rootDir: string): Promise<MachineCatalog> {
  return machineCatalog(await loadProjectSpecs(rootDir));
}

/**
 * The project's specs by machine id (those whose schema matches), with their files: what a machine invoke resolves
 * to, for the cost bound and the budget check.
 */
export async function loadProjectSpecs(rootDir: string): Promise<Map<string, { file: string; spec: FlowSpec }>> {
  const specs = new Map<string, { file: string; spec: FlowSpec }>();
  for (const file of await findSpecFiles(rootDir)) {
    const spec = parseSpecText(await readFile(join(rootDir, file), 'utf8')).spec;
    if (spec && !specs.has(spec.id)) specs.set(spec.id, { file, spec });
  }
  return specs;
}

/** The specs of `loadProjectSpecs` as a catalog by id. */
export function machineCatalog(specs: ReadonlyMap<string, { spec: FlowSpec }>): MachineCatalog {
  return Object.fromEntries([...specs].map(([id, { spec }]) => [id, spec]));
}
