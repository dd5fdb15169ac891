import { importSpecifier, machineNames, propertyKey, toolExportName } from '../names.ts';

/** A new `<id>.impl.ts` with typed stubs for the named guards and actions. */
export function implModuleText(id: string, guards: string[], actions: string[]): string {
  const n = machineNames(id);
  const lines = [
    `// Hand-written guards and actions for ${n.specFile}. flowing codegen adds missing stubs here and never overwrites.`,
    `import type { ${n.context}, ${n.event} } from "./${importSpecifier(n.machineFile)}";`,
    '',
    `type Args = { context: ${n.context}; event: ${n.event} };`,
    '',
    `export const ${n.guards} = {`,
    ...guards.map((g) => guardStub(g)),
    '};',
    '',
    `export const ${n.actions} = {`,
    ...actions.map((a) => actionStub(a)),
    '};',
    '',
  ];
  return lines.join('\n');
}

export function guardStub(name: string): string {
  return `  ${propertyKey(name)}: (args: Args): boolean => {\n    void args;\n    throw new Error(${JSON.stringify(`guard ${name} is not implemented yet`)});\n  },`;
}

export function actionStub(name: string): string {
  return `  ${propertyKey(name)}: (args: Args): void => {\n    void args;\n    throw new Error(${JSON.stringify(`action ${name} is not implemented yet`)});\n  },`;
}

/** The description a scaffolded tool starts with. */
export const STUB_DESCRIPTION = (name: string) => `Describe what ${name} does; the model and the studio show this text.`;

/** A typed `defineTool` stub for a tool the spec names but tools/ lacks. */
export function toolModuleText(name: string, inputFields: string[]): string {
  const fields = inputFields.map((f) => `    ${propertyKey(f)}: z.unknown(),`);
  return [
    "import { z } from 'zod';",
    "import { defineTool, ToolError } from '@flowing/runtime';",
    '',
    `export const ${toolExportName(name)} = defineTool({`,
    `  name: ${JSON.stringify(name)},`,
    `  description: ${JSON.stringify(STUB_DESCRIPTION(name))},`,
    fields.length ? '  input: z.object({' : '  input: z.object({}),',
    ...(fields.length ? [...fields, '  }),'] : []),
    '  output: z.object({}),',
    '  idempotent: false,',
    "  risk: 'low',",
    '  errors: { NOT_IMPLEMENTED: "the tool has no implementation yet" },',
    '  async run(input, { signal }) {',
    '    void input;',
    '    void signal;',
    `    throw new ToolError('NOT_IMPLEMENTED', ${JSON.stringify(`${name} is not implemented yet`)});`,
    '  },',
    '});',
    '',
  ].join('\n');
}
