import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineTool, type AnyMachineDefinition, type AnyTool } from '@flowing/runtime';
import { createCodegen } from '../../codegen/index.ts';
import { copyProject, editJsonFile } from '../helpers/project.ts';

/** A generated machine from an edited copy of an example's spec, in a throwaway project copy. */
export interface EditedMachine {
  machine: AnyMachineDefinition;
  dir: string;
  remove(): Promise<void>;
}

/**
 * Copies the project, lets `edit` change `machines/<id>/<id>.flow.json`, generates the machine (no type check: the
 * test imports it through vitest) and imports it. The copy keeps the example's recorded cases.
 */
export async function editedMachine(id: string, edit: (spec: any) => void): Promise<EditedMachine> {
  const project = await copyProject('flowing-test-edit-');
  const specFile = join(project.dir, 'machines', id, `${id}.flow.json`);
  await editJsonFile(specFile, edit);
  const codegen = createCodegen({ rootDir: project.dir });
  try {
    const result = await codegen.generate(specFile, { typeCheck: false });
    const errors = result.problems.filter((p) => p.severity === 'error');
    if (errors.length > 0) throw new Error(`the edited spec does not generate: ${JSON.stringify(errors)}`);
  } finally {
    codegen.dispose();
  }
  const module = (await import(pathToFileURL(join(project.dir, 'machines', id, `${id}.machine.ts`)).href)) as Record<string, unknown>;
  const machine = Object.values(module).find(
    (value) => (value as AnyMachineDefinition | undefined)?.id === id && 'specHash' in (value as object),
  ) as AnyMachineDefinition;
  return { machine, dir: project.dir, remove: project.remove };
}

/** The machine with every tool's `run` counting its calls (by tool name) before doing the real work. */
export function withCountingTools(machine: AnyMachineDefinition): { machine: AnyMachineDefinition; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const tools: Record<string, AnyTool> = {};
  for (const [name, tool] of Object.entries(machine.tools)) {
    calls[name] = 0;
    tools[name] = defineTool({
      ...tool,
      examples: [...tool.examples],
      errorExamples: [...tool.errorExamples],
      errors: { ...tool.errors },
      run: (input, context) => {
        calls[name]!++;
        return tool.run(input, context);
      },
    }) as AnyTool;
  }
  return { machine: { ...machine, tools }, calls };
}

/** Total real tool calls counted. */
export function totalCalls(calls: Record<string, number>): number {
  return Object.values(calls).reduce((a, b) => a + b, 0);
}
