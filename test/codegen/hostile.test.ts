import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Project } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { evaluateExpression, parseExpression, validateSpec } from '@flowing/spec';
import { useCodegenProject } from '../helpers/project.ts';

/**
 * RELIABILITY B1: hostile strings in every string field of a spec are either refused by the validator with a code
 * naming the field, or emitted so that (a) the module type-checks, (b) it has exactly the statements a harmless spec
 * has, (c) every string reads back unchanged at run time, (d) importing it changes no global and calls no trap.
 */
const HOSTILE = [
  "'",
  '"',
  '`',
  '${',
  '${globalThis.__flowingTrap()}',
  '*/',
  '*/ globalThis.__flowingTrap(); /*',
  '\\',
  '\\"); globalThis.__flowingTrap(); ("',
  '\r',
  '\r\n',
  '\n globalThis.__flowingTrap(); //',
  '\u2028',
  '\u2029',
  '\u0085',
  '\u0000',
  '\\u0027',
  '</script><script>alert(1)</script>',
  '__proto__',
  'constructor',
  'class',
  'a b',
  'Grüße, 注文 🚚',
  'x'.repeat(10_000),
  '"); globalThis.__flowingTrap(); ("',
  '{{ context.secret }}',
];

const run = promisify(execFile);
const project = useCodegenProject('flowing-hostile-');

/** A small spec that puts `text` into every free-text field: descriptions, defaults, prompts, model names, literals. */
function textSpec(id: string, text: string): any {
  return {
    specVersion: 1,
    id,
    description: text,
    models: { generate: text },
    context: {
      note: { type: 'string', default: text, description: text },
      reply: { type: 'string', optional: true },
      summary: { type: 'string', optional: true },
    },
    events: { GO: {} },
    initial: 'idle',
    states: {
      idle: {
        description: text,
        on: { GO: { target: 'talk', assign: { reply: JSON.stringify(text) }, description: text } },
      },
      talk: {
        invoke: {
          llm: 'generate',
          description: text,
          system: text,
          prompt: `${text} {{ context.note }} ${text}`,
          scripted: { reply: `${text}|{{ context.note }}` },
          onDone: { target: 'done', assign: { summary: 'output.text' } },
          onError: 'done',
        },
      },
      done: { type: 'final', description: text },
    },
  };
}

/** A spec that uses `text` as a name: state, event, context field, guard, action, tag, label, machine id. */
function nameSpecs(text: string): Array<{ field: string; spec: any }> {
  const base = () => textSpec('names', 'ok');
  const variants: Array<{ field: string; spec: any }> = [];
  const add = (field: string, edit: (s: any) => void) => {
    const s = base();
    edit(s);
    variants.push({ field, spec: s });
  };
  add('/states/<name>', (s) => {
    s.states[text] = { type: 'final' };
    s.states.idle.on.GO.target = text;
  });
  add('/events/<name>', (s) => {
    s.events[text] = {};
    s.states.idle.on[text] = 'done';
  });
  add('/context/<name>', (s) => {
    s.context[text] = { type: 'string', optional: true };
  });
  add('/guards/<name>', (s) => {
    s.guards = { [text]: {} };
  });
  add('/actions/<name>', (s) => {
    s.actions = { [text]: {} };
  });
  add('/states/idle/tags/0', (s) => {
    s.states.idle.tags = [text];
  });
  add('/id', (s) => {
    s.id = text;
  });
  return variants;
}

describe('hostile strings in specs (RELIABILITY B1)', () => {
  it('refuses hostile names with a code that names the field, or accepts only valid identifiers', () => {
    let refused = 0;
    for (const text of HOSTILE) {
      for (const { field, spec } of nameSpecs(text)) {
        const { problems, ok } = validateSpec(spec);
        if (ok) {
          expect(text, `accepted ${JSON.stringify(text.slice(0, 40))} as ${field}`).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
          continue;
        }
        refused++;
        const codes = problems.filter((p) => p.severity === 'error').map((p) => p.code);
        expect(
          codes.every((c) =>
            ['SPEC_INVALID_IDENTIFIER', 'SPEC_RESERVED_NAME', 'SPEC_INVALID_ID', 'SPEC_UNDECLARED_EVENT', 'SPEC_UNKNOWN_TARGET'].includes(
              c,
            ),
          ),
        ).toBe(true);
        expect(problems.some((p) => p.path !== '' && (field === '/id' ? p.path === '/id' : p.path.split('/').length >= 2))).toBe(true);
      }
    }
    expect(refused).toBeGreaterThan(HOSTILE.length * 4);
  });

  it('emits hostile free text safely: type-checks, no extra statements, values unchanged, no globals touched', async () => {
    const baseline = await project.codegen.generate(await writeSpec('baseline', textSpec('baseline', 'plain text')));
    expect(baseline.problems).toEqual([]);
    const baselineKinds = statementKinds(baseline.files[0]!.text);
    const refusedTexts: string[] = [];
    const expectations: Array<{ module: string; exportName: string; text: string; reply: unknown; summaryPrefix: string }> = [];

    for (const [i, text] of HOSTILE.entries()) {
      const id = `hostile-${i}`;
      const spec = textSpec(id, text);
      const result = await project.codegen.generate(await writeSpec(id, spec));
      if (!result.ok) {
        // Refused instead of emitted: acceptable only with a spec code that names the field.
        refusedTexts.push(text);
        for (const problem of result.problems) {
          expect(problem.code, `problem for ${JSON.stringify(text.slice(0, 40))}`).toMatch(/^(SPEC_|CODEGEN_TYPE_ERROR)/);
          expect(problem.path).not.toBe('');
        }
        continue;
      }
      expect(result.problems, `problems for ${JSON.stringify(text.slice(0, 40))}`).toEqual([]);
      expect(statementKinds(result.files[0]!.text)).toEqual(baselineKinds);
      const literal = parseExpression(JSON.stringify(text), ['context']);
      if (!literal.ok) throw new Error('a JSON string literal must parse as an expression');
      expectations.push({
        module: `./machines/${id}/${id}.machine.ts`,
        exportName: `hostile${i}`,
        text,
        reply: evaluateExpression(literal.ast, {}),
        summaryPrefix: `${text}|`,
      });
    }

    await writeFile(join(project.dir, 'expectations.json'), JSON.stringify(expectations));
    await writeFile(join(project.dir, 'import-check.mts'), IMPORT_CHECK);
    const { stdout } = await run(process.execPath, ['--conditions=@flowing/source', '--import', 'tsx', 'import-check.mts'], {
      cwd: project.dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    const report = JSON.parse(stdout) as Array<{
      module: string;
      mismatches: string[];
      reply: unknown;
      summaryOk: boolean;
      newGlobals: string[];
      trapCalls: number;
    }>;
    expect(report).toHaveLength(expectations.length);
    // Too long for an expression, and a template hole naming an undeclared field: both refused with a code.
    expect(refusedTexts).toEqual(['x'.repeat(10_000), '{{ context.secret }}']);
    for (const [i, entry] of report.entries()) {
      const what = JSON.stringify(expectations[i]!.text.slice(0, 40));
      expect(entry.mismatches, `texts read back from the machine for ${what}`).toEqual([]);
      expect(entry.reply, `expression literal for ${what}`).toEqual(expectations[i]!.reply);
      expect(entry.summaryOk, `scripted reply for ${what}`).toBe(true);
      expect(entry.newGlobals, `globals after importing ${what}`).toEqual([]);
      expect(entry.trapCalls, `trap calls for ${what}`).toBe(0);
    }
  }, 600_000);
});

async function writeSpec(id: string, spec: unknown): Promise<string> {
  const file = `machines/${id}/${id}.flow.json`;
  await mkdir(join(project.dir, 'machines', id), { recursive: true });
  await writeFile(join(project.dir, file), JSON.stringify(spec, null, 2));
  return file;
}

function statementKinds(text: string): string[] {
  const source = new Project({ useInMemoryFileSystem: true }).createSourceFile('m.ts', text);
  return source.getStatements().map((s) => s.getKindName());
}

/** Runs in a fresh Node process: imports each generated module and reports what it finds. */
const IMPORT_CHECK = `
import { readFileSync } from 'node:fs';
import { createActor, toPromise } from 'xstate';
// Libraries register their own globals on first import; load them before measuring.
await import('zod');
await import('@flowing/runtime');
await import('@flowing/spec');
let trapCalls = 0;
globalThis.__flowingTrap = () => { trapCalls++; };
const expectations = JSON.parse(readFileSync('expectations.json', 'utf8'));
const report = [];
for (const e of expectations) {
  const before = new Set(Object.getOwnPropertyNames(globalThis));
  const mod = await import(e.module);
  const newGlobals = Object.getOwnPropertyNames(globalThis).filter((k) => !before.has(k));
  const definition = mod[e.exportName];
  const actor = createActor(definition.machine, { input: {} });
  actor.start();
  actor.send({ type: 'GO' });
  await toPromise(actor);
  const context = actor.getSnapshot().context;
  // Every free-text field reads back exactly: descriptions, the default, the model and both prompts.
  const config = definition.machine.config;
  const request = config.states.talk.invoke.input({ context: { note: e.text }, event: { type: 'GO' } });
  const mismatches = Object.entries({
    'machine description': [config.description, e.text],
    'state description': [config.states.idle.description, e.text],
    'transition description': [config.states.idle.on.GO.description, e.text],
    'final state description': [config.states.done.description, e.text],
    'context default': [context.note, e.text],
    'model': [request.model, e.text],
    'system prompt': [request.system, e.text],
    'prompt': [request.prompt, e.text + ' ' + e.text + ' ' + e.text],
    'contract': [JSON.stringify([definition.contextFields, definition.eventFields]), JSON.stringify([
      { note: { type: 'string' }, reply: { type: 'string', optional: true }, summary: { type: 'string', optional: true } }, { GO: {} },
    ])],
  }).filter(([, [actual, expected]]) => actual !== expected).map(([what]) => what);
  report.push({
    module: e.module,
    mismatches,
    reply: context.reply,
    summaryOk: typeof context.summary === 'string' && context.summary.startsWith(e.summaryPrefix) && context.summary.endsWith(e.text),
    newGlobals,
    trapCalls,
  });
}
process.stdout.write(JSON.stringify(report));
`;
