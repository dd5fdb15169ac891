import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FlowingError, type AnyMachineDefinition } from '@flowing/runtime';
import { nearestNames } from './nearest.ts';

const MACHINE_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The `machines/` folders searched, in order: the working directory's, then this package's examples. */
function machineRoots(): string[] {
  return [...new Set([process.cwd(), PACKAGE_ROOT].map((root) => resolve(root, 'machines')))];
}

/** Ids of the machines found: those with generated code, and those with only a spec. */
export function listMachines(): { generated: Set<string>; specOnly: Set<string> } {
  const generated = new Set<string>();
  const specs = new Set<string>();
  for (const root of machineRoots()) {
    let entries: string[];
    try {
      entries = readdirSync(root);
    } catch {
      continue;
    }
    for (const id of entries) {
      if (existsSync(resolve(root, id, `${id}.machine.ts`))) generated.add(id);
      else if (existsSync(resolve(root, id, `${id}.flow.json`))) specs.add(id);
    }
  }
  for (const id of generated) specs.delete(id);
  return { generated, specOnly: specs };
}

/** Finds `machines/<id>/<id>.machine.ts` (in the working directory, then in this package) and its exported definition. */
export async function loadMachine(machineId: string): Promise<AnyMachineDefinition> {
  if (!MACHINE_ID.test(machineId))
    throw new FlowingError(
      'UNKNOWN_MACHINE',
      `'${machineId}' is not a machine id (kebab-case, e.g. order-support)${suggestion(machineId)}`,
    );
  const file = machineRoots()
    .map((root) => resolve(root, machineId, `${machineId}.machine.ts`))
    .find((path) => existsSync(path));
  if (!file) {
    const { specOnly } = listMachines();
    if (specOnly.has(machineId)) {
      throw new FlowingError(
        'UNKNOWN_MACHINE',
        `machine '${machineId}' has a spec (machines/${machineId}/${machineId}.flow.json) but no generated code; run \`flowing codegen\` first`,
      );
    }
    throw new FlowingError('UNKNOWN_MACHINE', `no machine '${machineId}' (looked for machines/${machineId}/)${suggestion(machineId)}`);
  }
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const found = Object.values(module).find(
    (value): value is AnyMachineDefinition =>
      !!value && typeof value === 'object' && (value as AnyMachineDefinition).id === machineId && 'machine' in value && 'specHash' in value,
  );
  if (!found) throw new FlowingError('UNKNOWN_MACHINE', `${file} exports no MachineDefinition with id '${machineId}'`);
  return found;
}

/** "; did you mean ...?" with the nearest known ids, or the list of known ids when none is near. */
function suggestion(machineId: string): string {
  const { generated, specOnly } = listMachines();
  const known = [...generated, ...specOnly].sort();
  if (known.length === 0) return '; there is no machines/ folder with a machine here';
  const near = nearestNames(machineId.toLowerCase(), known);
  if (near.length > 0) return `; did you mean ${near.map((id) => `'${id}'`).join(' or ')}?`;
  return `; known machines: ${known.join(', ')}`;
}
