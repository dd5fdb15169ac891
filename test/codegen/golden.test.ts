import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, loadToolCatalog, type ToolCatalog } from '../../codegen/index.ts';
import { parseSpecText } from '../../spec/index.ts';
import { copyProject, REPO_DIR } from '../helpers/project.ts';
import { cliArgs } from '../helpers/cli.ts';

const run = promisify(execFile);
const EXAMPLES = ['order-support', 'incident-triage'];
let tools: ToolCatalog;

beforeAll(async () => {
  tools = await loadToolCatalog(REPO_DIR);
});

async function specOf(id: string) {
  const result = parseSpecText(await readFile(join(REPO_DIR, `machines/${id}/${id}.flow.json`), 'utf8'), { tools });
  if (!result.spec) throw new Error(`example ${id} does not validate`);
  return result.spec;
}

describe('generated code of the examples', () => {
  for (const id of EXAMPLES) {
    it(`matches the golden files for ${id}`, async () => {
      const files = generate(await specOf(id), { tools });
      expect(files.map((f) => f.path)).toEqual([`machines/${id}/${id}.machine.ts`, `machines/${id}/${id}.registry.ts`]);
      for (const file of files) {
        const name = file.path.split('/').pop();
        expect(file.text).toBe(await readFile(join(REPO_DIR, 'test/fixtures/golden', `${name}.txt`), 'utf8'));
      }
    });

    it(`regenerates ${id} byte-identically (B2)`, async () => {
      const spec = await specOf(id);
      const first = generate(spec, { tools }).map((f) => f.text);
      const second = generate(structuredClone(spec), { tools: structuredClone(tools) }).map((f) => f.text);
      expect(second).toEqual(first);
    });

    it(`starts ${id} with the "do not edit" banner naming its spec`, async () => {
      const [machine] = generate(await specOf(id), { tools });
      expect(machine!.text.split('\n')[0]).toBe(`// Generated from ${id}.flow.json by flowing codegen — do not edit.`);
      expect(machine!.text.split('\n')[1]).toMatch(/spec sha256:[0-9a-f]{64} generator:flowing@\d+\.\d+\.\d+/);
    });
  }

  it('ignores layout moves: the generated code does not change when only positions change', async () => {
    const spec = await specOf('order-support');
    const moved = { ...spec, layout: { active: { x: 10, y: 20 } } };
    expect(generate(moved, { tools }).map((f) => f.text)).toEqual(generate(spec, { tools }).map((f) => f.text));
  });
});

describe('flowing codegen --check (B2)', () => {
  let project: Awaited<ReturnType<typeof copyProject>>;
  beforeAll(async () => {
    project = await copyProject();
  });
  afterAll(async () => project.remove());

  const cli = (args: string[]) =>
    run(process.execPath, cliArgs(...args), { cwd: project.dir }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );

  it('passes on the committed tree', async () => {
    const result = await cli(['codegen', '--check']);
    expect(result.stdout).toContain('generated code is up to date');
    expect(result.code).toBe(0);
  });

  it('fails after a spec edit and names the drifted files, then passes after codegen', async () => {
    const file = join(project.dir, 'machines/order-support/order-support.flow.json');
    const spec = JSON.parse(await readFile(file, 'utf8'));
    spec.states.active.states.idle.description = 'Waiting for the customer';
    await writeFile(file, JSON.stringify(spec, null, 2));
    const drift = await cli(['codegen', '--check']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain('CODEGEN_DRIFT');
    expect(drift.stdout).toContain('machines/order-support/order-support.machine.ts');
    expect(drift.stdout).not.toContain('incident-triage.machine.ts');
    const generated = await cli(['codegen', 'machines/order-support/order-support.flow.json']);
    expect(generated.code).toBe(0);
    expect((await cli(['codegen', '--check'])).code).toBe(0);
    // Three CLI runs over every example machine (five since support-desk and its two children).
  }, 120_000);

  it('fails when a generated file is edited by hand', async () => {
    const file = join(project.dir, 'machines/incident-triage/incident-triage.registry.ts');
    await writeFile(file, (await readFile(file, 'utf8')) + '// hand edit\n');
    const drift = await cli(['codegen', '--check', '--json']);
    expect(drift.code).toBe(1);
    expect(JSON.parse(drift.stdout).drifted).toEqual(['machines/incident-triage/incident-triage.registry.ts']);
  });

  it('writes nothing and exits 1 when validation fails', async () => {
    const file = join(project.dir, 'machines/incident-triage/incident-triage.flow.json');
    const machine = join(project.dir, 'machines/incident-triage/incident-triage.machine.ts');
    const before = await readFile(machine, 'utf8');
    const spec = JSON.parse(await readFile(file, 'utf8'));
    spec.states.waiting.on.ALERT.target = 'gathring';
    spec.description = 'changed, so a write would show';
    await writeFile(file, JSON.stringify(spec, null, 2));
    const result = await cli(['codegen', 'machines/incident-triage/incident-triage.flow.json']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'machines/incident-triage/incident-triage.flow.json#/states/waiting/on/ALERT/target SPEC_UNKNOWN_TARGET',
    );
    expect(await readFile(machine, 'utf8')).toBe(before);
  });

  it('exits 2 on a usage error', async () => {
    expect((await cli(['codegen', 'machines/none.flow.json'])).code).toBe(2);
    expect((await cli(['codegen', '--no-such-flag'])).code).toBe(2);
    expect((await cli(['validate', 'machines'])).code).toBe(2);
    expect((await cli([])).code).toBe(2);
  });

  it('refuses a spec whose file name does not match its id, and generates nothing for it', async () => {
    const misnamed = join(project.dir, 'machines/order-support-copy/order-support-copy.flow.json');
    await mkdir(dirname(misnamed), { recursive: true });
    await writeFile(misnamed, await readFile(join(project.dir, 'machines/order-support/order-support.flow.json'), 'utf8'));
    const validate = await cli(['validate', '--json', 'machines/order-support-copy/order-support-copy.flow.json']);
    expect(validate.code).toBe(1);
    expect(JSON.parse(validate.stdout).problems.map((p: { code: string; path: string }) => [p.code, p.path])).toEqual([
      ['CODEGEN_FILE_NAME', '/id'],
    ]);
    const generate = await cli(['codegen', 'machines/order-support-copy/order-support-copy.flow.json']);
    expect(generate.code).toBe(1);
    expect(await readdir(dirname(misnamed))).toEqual(['order-support-copy.flow.json']);
  });
});
