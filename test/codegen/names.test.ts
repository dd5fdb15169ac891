import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { generate, loadToolCatalog, scaffoldTool } from '@flowing/codegen';
import { FlowSpecSchema, validateSpec } from '@flowing/spec';
import { useCodegenProject } from '../helpers/project.ts';

/**
 * Issue 7, item 6: what `validate` accepts, codegen turns into code that type-checks — otherwise validate refuses it
 * with a code and a pointer. Names that are JavaScript reserved words or the generated module's own bindings.
 */
const project = useCodegenProject('flowing-names-');

async function writeSpec(spec: { id: string }): Promise<string> {
  const file = `machines/${spec.id}/${spec.id}.flow.json`;
  await mkdir(join(project.dir, 'machines', spec.id), { recursive: true });
  await writeFile(join(project.dir, file), JSON.stringify(spec, null, 2));
  return file;
}

const twoStep = (id: string) => ({
  specVersion: 1,
  id,
  context: {},
  events: { GO: {} },
  initial: 'a',
  states: { a: { on: { GO: 'b' } }, b: { type: 'final' } },
});

describe('reserved and clashing names', () => {
  it('refuses reserved-word tool names with a code and a pointer, or scaffolds a stub that loads and code that type-checks', async () => {
    for (const tool of ['class', 'default', 'import', 'export', 'await', 'yield']) {
      const spec = {
        specVersion: 1,
        id: `uses-${tool}`,
        context: {},
        events: { GO: {} },
        initial: 'a',
        states: { a: { on: { GO: 'b' } }, b: { invoke: { tool, input: { x: '1' }, onDone: 'c', onError: 'c' } }, c: { type: 'final' } },
      };
      const result = await project.codegen.generate(await writeSpec(spec));
      const errors = result.problems.filter((p) => p.severity === 'error');
      if (!validateSpec(spec).ok) {
        expect(
          errors.map((p) => [p.code, p.path]),
          tool,
        ).toEqual([['SPEC_RESERVED_NAME', '/states/b/invoke/tool']]);
        continue;
      }
      expect(errors, tool).toEqual([]);
      const loadErrors: string[] = [];
      const catalog = await loadToolCatalog(project.dir, { onError: (file) => loadErrors.push(file) });
      expect(loadErrors).toEqual([]);
      expect(catalog[tool]?.exportName).toBe(`${tool}Tool`);
    }
  }, 300_000);

  it('binds a tool whose name is a reserved word under a safe name, should the validator ever let one through', async () => {
    expect(await scaffoldTool(project.dir, 'yield')).toEqual({ path: 'tools/yield.ts', created: true });
    const tools = await loadToolCatalog(project.dir);
    expect(tools.yield?.exportName).toBe('yieldTool');
    const spec = FlowSpecSchema.parse({
      specVersion: 1,
      id: 'uses-yield',
      initial: 'a',
      states: { a: { invoke: { tool: 'yield', onDone: 'b' } }, b: { type: 'final' } },
    });
    const registry = generate(spec, { tools })[1]!.text;
    expect(registry).toContain('import { yieldTool } from "../../tools/yield.js";');
    expect(registry).toContain('  yield: yieldTool,');
  });

  it("generates code that type-checks and runs for machine ids that are reserved words or the module's own names", async () => {
    const ids = ['class', 'default', 'setup', 'assign', 'as-text', 'actors', 'define-machine', 'to-flow-error'];
    for (const id of ids) {
      const spec = twoStep(id);
      const result = await project.codegen.generate(await writeSpec(spec));
      if (!validateSpec(spec).ok) {
        expect(
          result.problems.filter((p) => p.severity === 'error').every((p) => p.code.startsWith('SPEC_') && p.path === '/id'),
          id,
        ).toBe(true);
        continue;
      }
      expect(result.problems, id).toEqual([]);
      const module = await import(pathToFileURL(join(project.dir, 'machines', id, `${id}.machine.ts`)).href);
      const definitions = Object.values(module).filter((value: any) => value?.id === id && 'contextFields' in value);
      expect(definitions, id).toHaveLength(1);
      const actor = createActor((definitions[0] as { machine: any }).machine).start();
      actor.send({ type: 'GO' });
      expect(actor.getSnapshot().status, id).toBe('done');
    }
  }, 300_000);

  it('imports only what a module uses: a model call with no input and no template holes type-checks', async () => {
    const spec = {
      specVersion: 1,
      id: 'plain-prompt',
      context: { reply: { type: 'string', optional: true } },
      events: { GO: {} },
      initial: 'a',
      states: {
        a: { on: { GO: 'talk' } },
        talk: { invoke: { llm: 'generate', prompt: 'Say hello (asText(context) is not code here)', onDone: 'b', onError: 'b' } },
        b: { type: 'final' },
      },
    };
    const result = await project.codegen.generate(await writeSpec(spec));
    expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(result.files[0]!.text).not.toMatch(/import \{[^}]*asText/);
  }, 120_000);

  it('generates code that type-checks and runs for a spec with no events', async () => {
    const spec = {
      specVersion: 1,
      id: 'no-events',
      context: { n: { type: 'number', default: 0 } },
      initial: 'a',
      states: { a: { after: { 5: { target: 'b', assign: { n: 'context.n + 1' } } } }, b: { type: 'final' } },
    };
    const result = await project.codegen.generate(await writeSpec(spec));
    if (!validateSpec(spec).ok) {
      expect(result.problems.filter((p) => p.severity === 'error').every((p) => p.code.startsWith('SPEC_') && p.path !== '')).toBe(true);
      return;
    }
    expect(result.problems).toEqual([]);
    expect(await readFile(join(project.dir, 'machines/no-events/no-events.machine.ts'), 'utf8')).toContain(
      'export type NoEventsEvent = { type: never };',
    );
    const { noEvents } = await import(pathToFileURL(join(project.dir, 'machines/no-events/no-events.machine.ts')).href);
    const actor = createActor(noEvents.machine).start();
    await toPromise(actor);
    expect(actor.getSnapshot().context).toEqual({ n: 1 });
  }, 120_000);
});
