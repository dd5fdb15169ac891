import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { implText, scaffoldTool } from '@flowing/codegen';
import { editJsonFile, useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject();
const SPEC = 'machines/incident-triage/incident-triage.flow.json';
const IMPL = 'machines/incident-triage/incident-triage.impl.ts';

const editSpec = (edit: (spec: any) => void) => editJsonFile(join(project.dir, SPEC), edit);

const exists = (path: string) =>
  access(join(project.dir, path)).then(
    () => true,
    () => false,
  );

/** Errors only: the validator's warnings (a guarded list without a fallback branch, say) do not stop a run. */
const errorsOf = (result: { problems: Array<{ severity: string }> }) => result.problems.filter((p) => p.severity === 'error');

describe('scaffolding of hand-written code', () => {
  it('creates typed stubs for named guards and actions, and the generated machine type-checks against them', async () => {
    await editSpec((s) => {
      s.guards = { isBusinessHours: { description: 'only page in office hours' } };
      s.actions = { recordPage: {} };
      s.states.summarize.invoke.onDone[0].guard = { ref: 'isBusinessHours' };
      s.states.paging.invoke.onDone.actions = ['recordPage'];
    });
    const result = await project.codegen.generate(SPEC);
    expect(errorsOf(result)).toEqual([]);
    expect(result.scaffolded).toEqual([IMPL]);
    const impl = await readFile(join(project.dir, IMPL), 'utf8');
    expect(impl).toContain('export const incidentTriageGuards = {');
    expect(impl).toContain('isBusinessHours: (args: Args): boolean =>');
    expect(impl).toContain('recordPage: (args: Args): void =>');
  }, 90_000);

  it('never overwrites the implementation, and adds only the stubs that are missing', async () => {
    const path = join(project.dir, IMPL);
    const implemented = (await readFile(path, 'utf8')).replace(
      'throw new Error("guard isBusinessHours is not implemented yet");',
      'return new Date().getUTCHours() >= 8;',
    );
    await writeFile(path, implemented);
    await editSpec((s) => {
      s.guards.isWeekend = {};
      s.states.summarize.invoke.onDone[1].guard = { ref: 'isWeekend' };
    });
    const result = await project.codegen.generate(SPEC);
    expect(errorsOf(result)).toEqual([]);
    const after = await readFile(path, 'utf8');
    expect(after).toContain('return new Date().getUTCHours() >= 8;');
    expect(after).toContain('isWeekend: (args: Args): boolean =>');
    expect(after.match(/isBusinessHours/g)).toHaveLength(1);

    const again = await project.codegen.generate(SPEC);
    expect(again.scaffolded).toEqual([]);
    expect(await readFile(path, 'utf8')).toBe(after);
  }, 90_000);

  it('creates a defineTool stub for a tool the spec names but tools/ lacks, then generates', async () => {
    await editSpec((s) => {
      s.states.paging.invoke.tool = 'open_ticket';
      s.states.paging.invoke.input = { service: 'context.service', title: "'incident'" };
      s.states.paging.invoke.onDone.assign = {};
    });
    expect(await exists('tools/open_ticket.ts')).toBe(false);
    const result = await project.codegen.generate(SPEC);
    expect(errorsOf(result)).toEqual([]);
    expect(result.scaffolded).toContain('tools/open_ticket.ts');
    const stub = await readFile(join(project.dir, 'tools/open_ticket.ts'), 'utf8');
    expect(stub).toContain('export const openTicket = defineTool({');
    expect(stub).toContain('service: z.unknown(),');
    expect(stub).toContain('title: z.unknown(),');
    expect(await readFile(join(project.dir, 'machines/incident-triage/incident-triage.registry.ts'), 'utf8')).toContain(
      'open_ticket: openTicket,',
    );
  }, 90_000);

  it('writes no tool stub, impl stub or generated file from a refused run, and all of them once the run succeeds', async () => {
    const machineFile = join(project.dir, 'machines/incident-triage/incident-triage.machine.ts');
    const readImpl = () => readFile(join(project.dir, IMPL), 'utf8').catch(() => undefined);
    const [machineBefore, implBefore] = await Promise.all([readFile(machineFile, 'utf8'), readImpl()]);
    await editSpec((s) => {
      s.actions = { ...s.actions, notifyPager: {} };
      s.states.paging.invoke.tool = 'open_pager';
      s.states.paging.invoke.input = { service: 'context.service' };
      s.states.paging.invoke.onDone = { target: 'monitoring', assign: { pageId: 'context.servce' }, actions: ['notifyPager'] };
    });
    const refused = await project.codegen.generate(SPEC);
    expect(refused.ok).toBe(false);
    expect(errorsOf(refused).map((p: any) => [p.code, p.path])).toEqual([
      ['CODEGEN_TYPE_ERROR', '/states/paging/invoke/onDone/assign/pageId'],
    ]);
    expect(refused.scaffolded).toEqual([]);
    expect(await exists('tools/open_pager.ts')).toBe(false);
    expect(await readImpl()).toBe(implBefore);
    expect(await readFile(machineFile, 'utf8')).toBe(machineBefore);

    await editSpec((s) => {
      s.states.paging.invoke.onDone.assign = {};
    });
    const accepted = await project.codegen.generate(SPEC);
    expect(errorsOf(accepted)).toEqual([]);
    expect(accepted.scaffolded).toEqual(['tools/open_pager.ts', IMPL]);
    expect(await readFile(join(project.dir, 'tools/open_pager.ts'), 'utf8')).toContain('export const openPager = defineTool({');
    expect(await readFile(join(project.dir, IMPL), 'utf8')).toContain('notifyPager: (args: Args): void =>');
    expect(await readFile(machineFile, 'utf8')).toContain('src: "tool.open_pager"');
  }, 120_000);

  it('leaves a guards table declared some other way alone instead of declaring it twice', () => {
    const existing = 'import { makeGuards } from "./guards.ts";\nexport const incidentTriageGuards = makeGuards();\n';
    expect(implText('incident-triage', existing, ['isWeekend'], [])).toBeUndefined();
  });

  it('leaves an existing tool file untouched', async () => {
    const path = join(project.dir, 'tools/fetch_logs.ts');
    const before = await readFile(path, 'utf8');
    const made = await scaffoldTool(project.dir, 'fetch_logs', ['other']);
    expect(made).toEqual({ path: 'tools/fetch_logs.ts', created: false });
    expect(await readFile(path, 'utf8')).toBe(before);
  });

  it('refuses a tool name that is not snake_case', async () => {
    await expect(scaffoldTool(project.dir, '../escape')).rejects.toThrow(/snake_case/);
    expect(await exists('escape.ts')).toBe(false);
  });
});
