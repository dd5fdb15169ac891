import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FlowingError, type AnyMachineDefinition } from '@flowing/runtime';

const MACHINE_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Finds `machines/<id>/<id>.machine.ts` (in the working directory, then in this package) and its exported definition. */
export async function loadMachine(machineId: string): Promise<AnyMachineDefinition> {
  if (!MACHINE_ID.test(machineId)) throw new FlowingError('UNKNOWN_MACHINE', `'${machineId}' is not a machine id (kebab-case, e.g. order-support)`);
  const candidates = [process.cwd(), PACKAGE_ROOT].map((root) => resolve(root, 'machines', machineId, `${machineId}.machine.ts`));
  const file = candidates.find((path) => existsSync(path));
  if (!file) {
    throw new FlowingError('UNKNOWN_MACHINE', `no generated machine for '${machineId}' (looked for machines/${machineId}/${machineId}.machine.ts); run \`flowing codegen\` first`);
  }
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const found = Object.values(module).find((value): value is AnyMachineDefinition =>
    !!value && typeof value === 'object' && (value as AnyMachineDefinition).id === machineId
    && 'machine' in value && 'spec' in value && 'specHash' in value);
  if (!found) throw new FlowingError('UNKNOWN_MACHINE', `${file} exports no MachineDefinition with id '${machineId}'`);
  return found;
}
