import { access, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_STATE_DEPTH, validateSpec } from '../../spec/index.ts';
import { useCodegenProject } from '../helpers/project.ts';

/**
 * Issue 7 item 6: what `validate` accepts, codegen turns into code that type-checks; what codegen could not, `validate`
 * refuses with a code and a pointer, and codegen then writes nothing (no tool stub left behind).
 */
const project = useCodegenProject('flowing-codegen-contract-');

function specWith(id: string, edit: (spec: any) => void = () => {}): any {
  const spec: any = {
    specVersion: 1,
    id,
    events: { GO: {} },
    initial: 'idle',
    states: { idle: { on: { GO: 'done' } }, done: { type: 'final' } },
  };
  edit(spec);
  return spec;
}

function nestedStates(from: number, to: number): any {
  return from === to ? { type: 'final' } : { initial: `l${from + 1}`, states: { [`l${from + 1}`]: nestedStates(from + 1, to) } };
}

/** Reserved words wherever a name becomes a property key or a string in generated code, never a binding. */
function reservedWordsEverywhere(): any {
  return {
    specVersion: 1,
    id: 'reserved-everywhere',
    context: {
      class: { type: 'string', default: '' },
      default: { type: 'number', default: 0 },
      new: { type: 'object', optional: true, fields: { delete: { type: 'string' } } },
    },
    events: { GO: { import: { type: 'string' }, export: { type: 'number' } }, DELETE: {} },
    guards: { class: {}, await: {} },
    actions: { yield: {}, let: {} },
    initial: 'default',
    states: {
      default: {
        entry: { actions: ['let'] },
        on: {
          GO: [
            { target: 'new', guard: { ref: 'class' }, assign: { class: 'event.import', default: 'event.export' }, actions: ['yield'] },
            { target: 'delete', guard: 'event.export > 1' },
            { target: 'return' },
          ],
        },
      },
      new: {
        invoke: {
          llm: 'classify',
          input: 'context.class',
          labels: ['class', 'default'],
          onDone: [{ guard: "output.label == 'class'", target: 'return' }, { target: 'delete' }],
          onError: 'return',
        },
      },
      delete: {
        initial: 'switch',
        onDone: 'return',
        states: { switch: { on: { DELETE: { target: 'case', guard: { ref: 'await' } } } }, case: { type: 'final' } },
      },
      return: { type: 'final' },
    },
  };
}

async function writeSpec(spec: any): Promise<string> {
  const file = `machines/${spec.id}/${spec.id}.flow.json`;
  await mkdir(join(project.dir, 'machines', spec.id), { recursive: true });
  await writeFile(join(project.dir, file), JSON.stringify(spec, null, 2));
  return file;
}

const exists = (path: string) =>
  access(join(project.dir, path)).then(
    () => true,
    () => false,
  );

describe('what validate accepts, codegen turns into code that type-checks', () => {
  const accepted: Array<[string, any]> = [
    [
      `states nested ${MAX_STATE_DEPTH} levels deep`,
      specWith('deep-states', (s) => {
        s.states.l1 = { ...nestedStates(1, MAX_STATE_DEPTH), onDone: 'done' };
        s.states.idle.on.GO = 'l1';
      }),
    ],
    [
      'a spec with no events',
      specWith('no-events', (s) => {
        delete s.events;
        s.states.idle = { after: { '10': 'done' } };
      }),
    ],
    ['reserved words as context, payload, state, guard, action and label names', reservedWordsEverywhere()],
    [
      'a tool name that contains a reserved word',
      specWith('tool-near-reserved', (s) => {
        s.states.idle.on.GO = 'call';
        s.states.call = { invoke: { tool: 'class_name', onDone: 'done', onError: 'done' } };
      }),
    ],
  ];
  for (const [what, spec] of accepted) {
    it(`validates and generates ${what}`, async () => {
      expect(validateSpec(spec).problems).toEqual([]);
      const result = await project.codegen.generate(await writeSpec(spec));
      expect(result.problems).toEqual([]);
      expect(result.ok).toBe(true);
    }, 120_000);
  }
});

describe('what codegen could not generate, validate refuses and codegen leaves no file behind', () => {
  for (const tool of ['class', 'default', 'import', 'export', 'await', 'yield', 'z']) {
    it(`refuses the tool name '${tool}' with SPEC_RESERVED_NAME at the invoke, scaffolding nothing`, async () => {
      const spec = specWith(`tool-${tool}`, (s) => {
        s.states.idle.on.GO = 'call';
        s.states.call = { invoke: { tool, input: { id: "'x'" }, onDone: 'done', onError: 'done' } };
      });
      const result = await project.codegen.generate(await writeSpec(spec));
      expect(result.ok).toBe(false);
      expect(result.problems.map((p) => [p.code, p.path])).toEqual([['SPEC_RESERVED_NAME', '/states/call/invoke/tool']]);
      expect(await exists(`tools/${tool}.ts`)).toBe(false);
      expect(await readdir(join(project.dir, 'machines', spec.id))).toEqual([`${spec.id}.flow.json`]);
    }, 120_000);
  }

  for (const id of ['class', 'default', 'await']) {
    it(`refuses the machine id '${id}' with SPEC_RESERVED_NAME at /id, writing nothing`, async () => {
      const result = await project.codegen.generate(await writeSpec(specWith(id)));
      expect(result.problems.map((p) => [p.code, p.path])).toEqual([['SPEC_RESERVED_NAME', '/id']]);
      expect(await readdir(join(project.dir, 'machines', id))).toEqual([`${id}.flow.json`]);
    }, 120_000);
  }

  it(`refuses states nested ${MAX_STATE_DEPTH + 1} levels deep with SPEC_NESTING_TOO_DEEP instead of crashing TypeScript`, async () => {
    const spec = specWith('too-deep', (s) => {
      s.states.l1 = { ...nestedStates(1, 50), onDone: 'done' };
      s.states.idle.on.GO = 'l1';
    });
    const result = await project.codegen.generate(await writeSpec(spec));
    expect(result.problems.map((p) => p.code)).toEqual(['SPEC_NESTING_TOO_DEEP']);
    expect(result.problems[0]!.path.split('/states/')).toHaveLength(MAX_STATE_DEPTH + 2);
    expect(await readdir(join(project.dir, 'machines/too-deep'))).toEqual(['too-deep.flow.json']);
  }, 120_000);
});
