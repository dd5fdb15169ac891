import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { editJsonFile, useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject();
const SPEC = 'machines/order-support/order-support.flow.json';

const editSpec = (edit: (spec: any) => void) => editJsonFile(join(project.dir, SPEC), edit);

async function restoreSpec(original: string) {
  await writeFile(join(project.dir, SPEC), original);
}

describe('type errors in generated code are mapped to the spec element that caused them', () => {
  let original: string;
  beforeAll(async () => {
    original = await readFile(join(project.dir, SPEC), 'utf8');
  });

  it('maps a misspelled context field in a guard to the guard pointer', async () => {
    await editSpec((s) => {
      s.states.active.states.fetch_order.invoke.onDone[0].guard = "context.intnt == 'refund'";
    });
    const result = await project.codegen.generate(SPEC, { write: false });
    await restoreSpec(original);
    expect(result.ok).toBe(false);
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toBe('/states/active/states/fetch_order/invoke/onDone/0/guard');
    expect(errors[0]!.message).toMatch(/Property 'intnt' does not exist on type 'OrderSupportContext'/);
  }, 60_000);

  it('maps a misspelled field in an input mapping to that input field', async () => {
    await editSpec((s) => {
      s.states.active.states.fetch_order.invoke.input.order_id = "context.ordr ?? ''";
    });
    const result = await project.codegen.generate(SPEC, { write: false });
    await restoreSpec(original);
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(['/states/active/states/fetch_order/invoke/input/order_id']);
    expect(errors[0]!.message).toMatch(/Property 'ordr' does not exist/);
  }, 60_000);

  it('maps a value of the wrong type for a tool input to that input field', async () => {
    await editSpec((s) => {
      s.states.active.states.fetch_order.invoke.input.order_id = 'context.order.total';
    });
    const result = await project.codegen.generate(SPEC, { write: false });
    await restoreSpec(original);
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(['/states/active/states/fetch_order/invoke/input/order_id']);
  }, 60_000);

  it('maps a wrong output field in an onDone assign to that assign', async () => {
    await editSpec((s) => {
      s.states.active.states.refund.invoke.onDone.assign.refundId = 'output.refundId';
    });
    const result = await project.codegen.generate(SPEC, { write: false });
    await restoreSpec(original);
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(['/states/active/states/refund/invoke/onDone/assign/refundId']);
  }, 60_000);

  it('maps a misspelled field of a call error to the onError guard (the error is typed, not cast)', async () => {
    await editSpec((s) => {
      s.states.active.states.fetch_order.invoke.onError[0].guard = "error.cod == 'ORDER_NOT_FOUND'";
    });
    const result = await project.codegen.generate(SPEC, { write: false });
    await restoreSpec(original);
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(['/states/active/states/fetch_order/invoke/onError/0/guard']);
    expect(errors[0]!.message).toMatch(/Property 'cod' does not exist on type 'FlowError(<string>)?'/);
  }, 60_000);

  it('maps an error in an assign several transitions share to each of them', async () => {
    const places = ['idle', 'ask_order_id', 'order_not_found'];
    await editSpec((s) => {
      for (const state of places) s.states.active.states[state].on.USER_MESSAGE.assign.lastMessage = 'event.txt';
    });
    const result = await project.codegen.generate(SPEC, { write: false });
    await restoreSpec(original);
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(places.map((state) => `/states/active/states/${state}/on/USER_MESSAGE/assign/lastMessage`));
    expect(new Set(errors.map((e) => e.message)).size).toBe(1);
    expect(errors[0]!.message).toMatch(/Property 'txt' does not exist/);
  }, 60_000);

  it('does not write generated files when they do not type-check', async () => {
    const machineFile = join(project.dir, 'machines/order-support/order-support.machine.ts');
    const before = await readFile(machineFile, 'utf8');
    await editSpec((s) => {
      s.states.active.states.idle.on.USER_MESSAGE.assign.lastMessage = 'event.txt';
    });
    const result = await project.codegen.generate(SPEC, { write: true });
    await restoreSpec(original);
    expect(result.problems.map((p) => [p.code, p.path])).toEqual([
      ['CODEGEN_TYPE_ERROR', '/states/active/states/idle/on/USER_MESSAGE/assign/lastMessage'],
    ]);
    expect(await readFile(machineFile, 'utf8')).toBe(before);
  }, 60_000);

  it('sees a tool edited on disk between two checks of one long-lived code generator', async () => {
    const toolFile = join(project.dir, 'tools/query_order.ts');
    const tool = await readFile(toolFile, 'utf8');
    expect((await project.codegen.generate(SPEC, { write: false })).ok).toBe(true);
    // The order's status becomes any string: assigning the output to `context.order` (status: an enum) no longer fits.
    await writeFile(toolFile, tool.replace("status: z.enum(['processing', 'shipped', 'delivered'])", 'status: z.string()'));
    const result = await project.codegen.generate(SPEC, { write: false });
    await writeFile(toolFile, tool);
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toContain('/states/active/states/fetch_order/invoke/onDone/1/assign/order');
  }, 180_000);
});
