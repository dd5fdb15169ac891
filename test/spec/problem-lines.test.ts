import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { useCodegenProject } from '../helpers/project.ts';

/**
 * Issue 7 item 7: names with line breaks and control characters reach `flowing validate` and `flowing codegen`
 * output escaped. Each problem is exactly one line, carries no control character, and its pointer still names the
 * element (decodeURIComponent gives the exact JSON pointer back).
 */
const project = useCodegenProject('flowing-problem-lines-');

const ESC_EVENT = '\u001b[31mRED';
/** State names: a line break, an ESC sequence, U+2028, NUL, DEL, a C1 CSI, a bidi override, a tab, a CR. */
const HOSTILE_STATES = [
  'line1\nline2',
  '\u001b]0;owned\u0007title',
  'para\u2028graph',
  'nul\u0000byte',
  'del\u007fc1\u009b[2J',
  'rtl\u202eevil',
  'tab\there',
  'cr\rlf',
];

function hostileSpec(): unknown {
  const states: Record<string, unknown> = {
    idle: { on: { GO: HOSTILE_STATES[0], [ESC_EVENT]: 'nowhere\u0085\u001b[5m', 'NUL\u0000EVENT': 'done' } },
    done: { type: 'final' },
  };
  for (const name of HOSTILE_STATES) states[name] = { type: 'final' };
  return { specVersion: 1, id: 'hostile-names', events: { GO: {}, [ESC_EVENT]: {} }, initial: 'idle', states };
}

const FILES = {
  names: 'machines/hostile-names/hostile-names.flow.json',
  // A file name with an ESC in it: the spec is valid, the file name is not (CODEGEN_FILE_NAME quotes it).
  fileName: 'machines/esc/esc\u001b[1m.flow.json',
  // A duplicate key with a line break, reported from the JSON text before parsing.
  duplicate: 'machines/dup/dup.flow.json',
};

async function writeFixtures(dir: string): Promise<void> {
  for (const file of Object.values(FILES)) await mkdir(join(dir, file, '..'), { recursive: true });
  await writeFile(join(dir, FILES.names), JSON.stringify(hostileSpec(), null, 2));
  const valid = { specVersion: 1, id: 'esc', events: { GO: {} }, initial: 'a', states: { a: { on: { GO: 'b' } }, b: { type: 'final' } } };
  await writeFile(join(dir, FILES.fileName), JSON.stringify(valid));
  await writeFile(
    join(dir, FILES.duplicate),
    '{"specVersion":1,"id":"dup","states":{"a\\nb":{"type":"final"},"a\\nb":{"type":"final"}},"initial":"a\\nb"}',
  );
}

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, cliArgs(...args), { cwd, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** C0 controls, DEL, C1 controls, U+2028/U+2029 and bidi controls: nothing of the kind may reach a terminal raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this pattern finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

interface JsonProblem {
  file: string;
  path: string;
  code: string;
  message: string;
  severity: string;
}

/** The value a JSON pointer names in a document, or undefined when it names nothing. */
function resolvePointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let value: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!value || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Checks text output against the JSON output of the same command: one safe line per problem, same pointers. The
 * channel routing table that `validate` prints after the problems (when machines of the project listen) is not a
 * problem line.
 */
function expectOneSafeLinePerProblem(stdout: string, problems: JsonProblem[]): void {
  expect(stdout.endsWith('\n')).toBe(true);
  const routes = stdout.indexOf('channel routes:\n');
  const lines = stdout.slice(0, routes >= 0 ? routes - 1 : -1).split('\n');
  expect(lines).toHaveLength(problems.length);
  for (const [i, line] of lines.entries()) {
    expect(UNSAFE.test(line), `line ${i}: ${JSON.stringify(line)}`).toBe(false);
    const problem = problems[i]!;
    const hash = line.indexOf('#');
    const space = line.indexOf(' ', hash);
    expect(decodeURIComponent(line.slice(hash + 1, space)), `pointer of line ${i}`).toBe(problem.path);
    expect(line.slice(space + 1).startsWith(`${problem.code} `)).toBe(true);
  }
}

describe('problem lines stay one line (issue 7, item 7)', () => {
  it('validate prints each problem on one line with escaped names, pointers that decode to the element, and safe JSON', async () => {
    await writeFixtures(project.dir);
    const files = Object.values(FILES);
    const json = await run(['validate', '--json', ...files], project.dir);
    expect(json.code).toBe(1);
    expect(UNSAFE.test(json.stdout.replace(/\n/g, ''))).toBe(false);
    const problems = (JSON.parse(json.stdout) as { problems: JsonProblem[] }).problems;
    expect(problems.length).toBeGreaterThanOrEqual(HOSTILE_STATES.length + 3);
    for (const problem of problems) expect(UNSAFE.test(problem.message), problem.message).toBe(false);

    // Every pointer names a real element of its document, and each hostile state is named by exactly one of them.
    const documents: Record<string, unknown> = {
      [FILES.names]: hostileSpec(),
      [FILES.fileName]: { id: 'esc' },
      [FILES.duplicate]: { states: { 'a\nb': {} } },
    };
    for (const problem of problems)
      expect(resolvePointer(documents[problem.file], problem.path), `${problem.code} ${JSON.stringify(problem.path)}`).toBeDefined();
    for (const name of HOSTILE_STATES) {
      const pointer = `/states/${name}`;
      expect(problems.filter((p) => p.file === FILES.names && p.path === pointer && p.code === 'SPEC_INVALID_IDENTIFIER')).toHaveLength(1);
    }
    expect(problems.map((p) => p.code)).toEqual(
      expect.arrayContaining(['CODEGEN_FILE_NAME', 'SPEC_DUPLICATE_KEY', 'SPEC_UNDECLARED_EVENT', 'SPEC_UNKNOWN_TARGET']),
    );

    const text = await run(['validate', ...files], project.dir);
    expect(text.code).toBe(1);
    expectOneSafeLinePerProblem(text.stdout, problems);
    expect(text.stdout).toContain(`${FILES.names}#/states/line1%0Aline2 SPEC_INVALID_IDENTIFIER state name "line1\\nline2"`);
    expect(text.stdout).toContain('machines/esc/esc\\u001b[1m.flow.json#/id CODEGEN_FILE_NAME');
  }, 180_000);

  it('escapes a file name it cannot find in the usage error', async () => {
    const result = await run(['validate', 'machines/none\u001b[2J\n.flow.json'], project.dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('flowing validate: no such file: machines/none\\u001b[2J\\n.flow.json\n');
  }, 60_000);

  it('codegen prints the same safe lines for specs it refuses, and writes nothing for them', async () => {
    await writeFixtures(project.dir);
    const files = Object.values(FILES);
    const json = await run(['codegen', '--json', ...files], project.dir);
    expect(json.code).toBe(1);
    expect(UNSAFE.test(json.stdout.replace(/\n/g, ''))).toBe(false);
    const problems = (JSON.parse(json.stdout) as { problems: JsonProblem[] }).problems;
    for (const problem of problems) expect(UNSAFE.test(problem.message), problem.message).toBe(false);
    expect(problems.filter((p) => p.path === '/states/line1\nline2')).toHaveLength(1);

    const text = await run(['codegen', ...files], project.dir);
    expect(text.code).toBe(1);
    expectOneSafeLinePerProblem(text.stdout, problems);
    expect(await readdir(join(project.dir, 'machines/hostile-names'))).toEqual(['hostile-names.flow.json']);
    expect(await readdir(join(project.dir, 'machines/dup'))).toEqual(['dup.flow.json']);
  }, 180_000);
});
