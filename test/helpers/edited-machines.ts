import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyMachineDefinition } from '@flowing/runtime';
import { FlowSpecSchema } from '@flowing/spec';
import { generate, loadToolCatalog } from '../../codegen/index.ts';
import { REPO_DIR } from './project.ts';

/**
 * An example machine as a user would have it after editing its spec and running codegen: `edit` changes a copy of
 * `machines/<id>/<id>.flow.json`, the generated modules are written under `<projectDir>/machines/<name>/` and
 * imported. `projectDir` is a project copy (`copyProject`), so the generated code resolves the tools and runtime.
 */
export async function editedMachine(
  projectDir: string,
  id: string,
  name: string,
  edit: (spec: any) => void,
): Promise<{ definition: AnyMachineDefinition; spec: unknown }> {
  const spec = JSON.parse(await readFile(join(REPO_DIR, 'machines', id, `${id}.flow.json`), 'utf8'));
  edit(spec);
  const parsed = FlowSpecSchema.parse(spec);
  const machineDir = `machines/${name}`;
  const files = generate(parsed, { tools: await loadToolCatalog(projectDir), machineDir });
  await mkdir(join(projectDir, machineDir), { recursive: true });
  for (const file of files) await writeFile(join(projectDir, machineDir, file.path.split('/').at(-1)!), file.text);
  const module = (await import(pathToFileURL(join(projectDir, machineDir, `${id}.machine.ts`)).href)) as Record<string, unknown>;
  const definition = Object.values(module).find(
    (value): value is AnyMachineDefinition =>
      !!value && typeof value === 'object' && (value as { id?: unknown }).id === id && 'machine' in value,
  );
  if (!definition) throw new Error(`the generated module of ${name} exports no machine '${id}'`);
  return { definition, spec };
}
