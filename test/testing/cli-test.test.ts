import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodegen } from '../../codegen/index.ts';
import { cliArgs } from '../helpers/cli.ts';
import { copyProject, editJsonFile } from '../helpers/project.ts';

const run = promisify(execFile);

/** Runs the flowing CLI in `cwd`; resolves with the exit code and output (never rejects on a non-zero exit). */
async function flowing(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, cliArgs(...args), { cwd, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function readCases(dir: string): Promise<Record<string, string>> {
  const folder = join(dir, 'machines/order-support/cases');
  const out: Record<string, string> = {};
  for (const name of (await readdir(folder)).sort()) out[name] = await readFile(join(folder, name), 'utf8');
  return out;
}

describe('flowing test (the CLI, in a copy of the project)', () => {
  let project: Awaited<ReturnType<typeof copyProject>>;
  beforeAll(async () => {
    project = await copyProject('flowing-cli-test-');
  });
  afterAll(async () => {
    await project?.remove();
  });

  it('passes on the unchanged examples: paths and recorded cases, with coverage', async () => {
    const result = await flowing(project.dir, 'test');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✓ order-support');
    expect(result.stdout).toContain('✓ incident-triage');
    expect(result.stdout).toMatch(
      /order-support\n {2}paths: (\d+)\/\1 passed\n {2}cases: 4\/4 passed\n {2}coverage: states 15\/15, transitions 27\/27/,
    );
  }, 120_000);

  it('exits 1 with the diff after an edit; --update rewrites only the diverging case, and the next run passes', async () => {
    await editJsonFile(join(project.dir, 'machines/order-support/order-support.flow.json'), (spec) => {
      delete spec.states.active.states.trace_shipment.invoke.onDone.assign;
    });
    const codegen = createCodegen({ rootDir: project.dir });
    try {
      await codegen.generate(join(project.dir, 'machines/order-support/order-support.flow.json'), { typeCheck: false });
    } finally {
      codegen.dispose();
    }
    const before = await readCases(project.dir);
    const failing = await flowing(project.dir, 'test', 'order-support', '--no-paths');
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain(
      '✗ order-query: final context.shipment: recorded {"carrier":"Parcelo","eta":"2026-12-02","location":"Leipzig hub"}, now undefined',
    );
    expect(failing.stdout).toContain('cases: 3/4 passed');
    const failingJson = JSON.parse((await flowing(project.dir, 'test', 'order-support', '--no-paths', '--json')).stdout) as {
      machines: Array<{ cases: Array<{ name: string; ok: boolean; code?: string }> }>;
    };
    expect(failingJson.machines[0]!.cases.find((c) => c.name === 'order-query')).toMatchObject({ ok: false, code: 'REPLAY_DIVERGED' });

    const updating = await flowing(project.dir, 'test', 'order-support', '--no-paths', '--update');
    expect(updating.code).toBe(0);
    expect(updating.stdout).toContain('updated machines/order-support/cases/order-query.case.jsonl');
    const after = await readCases(project.dir);
    const changed = Object.keys(after).filter((name) => after[name] !== before[name]);
    expect(changed).toEqual(['order-query.case.jsonl']);
    const expectLine = JSON.parse(after['order-query.case.jsonl']!.trim().split('\n').at(-1)!);
    expect(expectLine.context).not.toHaveProperty('shipment');

    const again = await flowing(project.dir, 'test', 'order-support', '--no-paths');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('cases: 4/4 passed');
  }, 180_000);

  it('reports a case of another machine or format version with its code, exit 1, no crash; --json carries the codes', async () => {
    const folder = join(project.dir, 'machines/order-support/cases');
    const incident = await readFile(join(project.dir, 'machines/incident-triage/cases/critical.case.jsonl'), 'utf8');
    await writeFile(join(folder, 'misplaced.case.jsonl'), incident);
    const lines = (await readFile(join(folder, 'not-found.case.jsonl'), 'utf8')).split('\n');
    lines[0] = JSON.stringify({ ...JSON.parse(lines[0]!), formatVersion: 99 });
    await writeFile(join(folder, 'future.case.jsonl'), lines.join('\n'));
    try {
      const text = await flowing(project.dir, 'test', 'order-support', '--no-paths');
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(
        "✗ machines/order-support/cases/misplaced.case.jsonl: error CASE_WRONG_MACHINE: machines/order-support/cases/misplaced.case.jsonl was recorded on machine 'incident-triage', not 'order-support'",
      );
      expect(text.stdout).toContain(
        'error CASE_FORMAT_VERSION: machines/order-support/cases/future.case.jsonl:1: case format version 99 is not readable',
      );
      expect(text.stderr).not.toMatch(/\n\s+at /);
      const json = await flowing(project.dir, 'test', 'order-support', '--no-paths', '--json');
      expect(json.code).toBe(1);
      const report = JSON.parse(json.stdout) as {
        ok: boolean;
        machines: Array<{ cases: Array<{ name: string; error?: { code: string } }> }>;
      };
      expect(report.ok).toBe(false);
      const codes = Object.fromEntries(
        report.machines[0]!.cases.filter((c) => c.error).map((c) => [c.name.split('/').at(-1), c.error!.code]),
      );
      expect(codes).toEqual({ 'misplaced.case.jsonl': 'CASE_WRONG_MACHINE', 'future.case.jsonl': 'CASE_FORMAT_VERSION' });
    } finally {
      await Promise.all(
        ['misplaced', 'future'].map((n) => import('node:fs/promises').then((fs) => fs.rm(join(folder, `${n}.case.jsonl`)))),
      );
    }
  }, 120_000);

  it('flowing run --record NAME saves a case that flowing test then replays', async () => {
    const recorded = await flowing(
      project.dir,
      'run',
      'order-support',
      '--message',
      'Where is order A1003?',
      '--record',
      'delivered-order',
    );
    expect(recorded.code).toBe(0);
    expect(recorded.stderr).toContain('recorded case machines/order-support/cases/delivered-order.case.jsonl');
    const text = await readFile(join(project.dir, 'machines/order-support/cases/delivered-order.case.jsonl'), 'utf8');
    expect(JSON.parse(text.split('\n')[0]!)).toMatchObject({
      type: 'case',
      formatVersion: 1,
      machineId: 'order-support',
      name: 'delivered-order',
      source: 'run',
    });
    const replay = await flowing(project.dir, 'test', 'order-support', '--no-paths', '--json');
    expect(replay.stderr).toBe('');
    const report = JSON.parse(replay.stdout) as { machines: Array<{ cases: Array<{ name: string; ok: boolean }> }> };
    expect(report.machines[0]!.cases.find((c) => c.name === 'delivered-order')).toMatchObject({ ok: true });
    const bad = await flowing(project.dir, 'run', 'order-support', '--message', 'hi', '--record', '../escape');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error RUN_BAD_CASE_NAME');
  }, 120_000);
});
