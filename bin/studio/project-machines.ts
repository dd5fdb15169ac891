import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnyMachineDefinition } from '@flowing/runtime';
import { loadMachine } from '../run/load.ts';

/** The generated machines of one project, with the spec each was generated from (for the Inspect graph). */
export interface ProjectMachines {
  definitions: AnyMachineDefinition[];
  specs: Record<string, unknown>;
  /** Ids with a spec but no generated code: the Inspect mode says "generate first" for them. */
  notGenerated: string[];
}

/**
 * Loads `machines/<id>/<id>.machine.ts` of the project in `rootDir` only: the studio edits that project, so it runs
 * that project's machines and never the CLI package's examples (which `flowing serve` falls back to).
 */
export async function loadProjectMachines(rootDir: string): Promise<ProjectMachines> {
  const folder = join(rootDir, 'machines');
  let ids: string[] = [];
  try {
    ids = readdirSync(folder).sort();
  } catch {
    // No machines/ folder: nothing to serve.
  }
  const definitions: AnyMachineDefinition[] = [];
  const specs: Record<string, unknown> = {};
  const notGenerated: string[] = [];
  for (const id of ids) {
    const specFile = join(folder, id, `${id}.flow.json`);
    if (!existsSync(join(folder, id, `${id}.machine.ts`))) {
      if (existsSync(specFile)) notGenerated.push(id);
      continue;
    }
    definitions.push(await loadMachine(id));
    try {
      specs[id] = JSON.parse(readFileSync(specFile, 'utf8'));
    } catch {
      // GET /machines then answers spec: null for it; the studio falls back to the spec open in the editor.
    }
  }
  return { definitions, specs, notGenerated };
}
