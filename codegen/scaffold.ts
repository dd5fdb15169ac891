import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Project, SyntaxKind } from 'ts-morph';
import { z } from 'zod';
import { RESERVED_FILE_NAMES, SPEC_VERSION, TOOL_NAME_PATTERN, toolNameProblem, type FlowSpec } from '@flowing/spec';
import { actionStub, guardStub, implModuleText, STUB_DESCRIPTION, toolModuleText } from './emit/scaffold.ts';
import { machineNames, toolExportName } from './names.ts';
import type { ToolCatalogEntry } from './tool-catalog.ts';

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * The `$schema` of a spec at `machines/<id>/<id>.flow.json`: the JSON Schema codegen writes to
 * `machines/flow.schema.json`, so editors validate and complete the spec.
 */
export const SPEC_SCHEMA_REFERENCE = '../flow.schema.json';

/**
 * The spec a new machine starts from: `$schema`, the id, no events, one initial state. `flowing init`'s example and
 * the studio's New machine both begin here, so every new spec carries `$schema`.
 * @example formatSpec(newSpecSkeleton('returns-desk'))
 */
export function newSpecSkeleton(id: string, initial = 'idle'): FlowSpec {
  return {
    $schema: SPEC_SCHEMA_REFERENCE,
    specVersion: SPEC_VERSION,
    id,
    events: {},
    initial,
    states: { [initial]: {} },
  } as unknown as FlowSpec;
}

/**
 * Refuses a name no tool file may have: not snake_case, or one of the names the validator refuses for files
 * (RESERVED_FILE_NAMES: `then`, `con`, `node_modules` ...). A reserved word is fine here: its export gets a safe name.
 */
function checkStubName(name: string): void {
  if (!TOOL_NAME_PATTERN.test(name) || name.length > 64) throw new Error(`tool name ${JSON.stringify(name)} must be snake_case`);
  if (RESERVED_FILE_NAMES.has(name)) throw new Error(toolNameProblem(name));
}

/**
 * Creates `tools/<name>.ts` with a typed `defineTool` stub unless the file exists (it never overwrites).
 * @example await scaffoldTool(root, 'send_email', ['to', 'subject'])
 */
export async function scaffoldTool(rootDir: string, name: string, inputFields: string[] = []): Promise<{ path: string; created: boolean }> {
  checkStubName(name);
  const relative = `tools/${name}.ts`;
  const path = join(rootDir, relative);
  if (await exists(path)) return { path: relative, created: false };
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, toolModuleText(name, inputFields), { flag: 'wx' });
  return { path: relative, created: true };
}

/** A tool stub not yet written: its file, its text, and the catalog entry loading it would give. */
export interface ToolStub {
  path: string;
  text: string;
  entry: ToolCatalogEntry;
}

/**
 * The `defineTool` stub for a tool a spec names but tools/ lacks, in memory: codegen validates and type-checks
 * against it, and writes it only when the whole run succeeds.
 */
export function toolStub(name: string, inputFields: string[]): ToolStub {
  checkStubName(name);
  const input = z.object(Object.fromEntries(inputFields.map((f) => [f, z.unknown()])));
  const path = `tools/${name}.ts`;
  return {
    path,
    text: toolModuleText(name, inputFields),
    entry: {
      name,
      description: STUB_DESCRIPTION(name),
      idempotent: false,
      risk: 'low',
      errors: ['NOT_IMPLEMENTED'],
      inputFields,
      requiredInputFields: [],
      file: path,
      exportName: toolExportName(name),
      inputSchema: z.toJSONSchema(input) as Record<string, unknown>,
      outputSchema: z.toJSONSchema(z.object({})) as Record<string, unknown>,
    },
  };
}

/**
 * The text `<id>.impl.ts` should have: a new file with stubs, or the existing text with only the missing stubs
 * added. Returns undefined when nothing needs to change.
 */
export function implText(id: string, existing: string | undefined, guards: string[], actions: string[]): string | undefined {
  if (guards.length === 0 && actions.length === 0) return undefined;
  if (existing === undefined) return implModuleText(id, guards, actions);
  const names = machineNames(id);
  const project = new Project({ useInMemoryFileSystem: true });
  const source = project.createSourceFile('impl.ts', existing);
  let changed = false;
  const addMissing = (variable: string, wanted: string[], stub: (name: string) => string) => {
    if (wanted.length === 0) return;
    const declaration = source.getVariableDeclaration(variable);
    const object = declaration?.getInitializerIfKind(SyntaxKind.ObjectLiteralExpression);
    // Declared some other way (a function call, a spread of imports): the author owns it; the type check will say
    // what is missing rather than codegen guessing where to add it.
    if (declaration && !object) return;
    if (!object) {
      source.addStatements(`\nexport const ${variable} = {\n${wanted.map(stub).join('\n')}\n};\n`);
      changed = true;
      return;
    }
    const present = new Set(object.getProperties().map((p) => ('getName' in p ? (p as { getName(): string }).getName() : '')));
    const missing = wanted.filter((n) => !present.has(n));
    if (missing.length === 0) return;
    const closing = object.getEnd() - 1;
    const before = source.getFullText().slice(0, closing).replace(/\s*$/, '');
    const separator = before.endsWith('{') || before.endsWith(',') ? '' : ',';
    source.replaceText([before.length, closing], `${separator}\n${missing.map(stub).join('\n')}\n`);
    changed = true;
  };
  addMissing(names.guards, guards, guardStub);
  addMissing(names.actions, actions, actionStub);
  return changed ? source.getFullText() : undefined;
}
