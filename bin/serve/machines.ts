import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyMachineDefinition } from '@flowing/runtime';
import { listMachines, loadMachine } from '../run/load.ts';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The project's generated machines and, for `GET /machines`, the spec each was generated from. */
export interface ServedMachines {
  definitions: AnyMachineDefinition[];
  specs: Record<string, unknown>;
  /** Ids with a spec but no generated code (not served; `flowing codegen` makes them servable). */
  notGenerated: string[];
}

/** Loads every `machines/<id>/<id>.machine.ts` found the way `flowing run` finds one. */
export async function loadServedMachines(): Promise<ServedMachines> {
  const { generated, specOnly } = listMachines();
  const definitions: AnyMachineDefinition[] = [];
  const specs: Record<string, unknown> = {};
  for (const id of [...generated].sort()) {
    definitions.push(await loadMachine(id));
    const specFile = [process.cwd(), PACKAGE_ROOT]
      .map((root) => resolve(root, 'machines', id, `${id}.flow.json`))
      .find((file) => existsSync(file));
    if (specFile) {
      try {
        specs[id] = JSON.parse(readFileSync(specFile, 'utf8'));
      } catch {
        // GET /machines then answers spec: null for it; the machine itself still runs from its generated code.
      }
    }
  }
  return { definitions, specs, notGenerated: [...specOnly].sort() };
}
