import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type AnyMachineDefinition } from '@flowing/runtime';
import { useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject('flowing-machine-invoke-');
const CHILD = 'machines/refund-billing/refund-billing.flow.json';
const PARENT = 'machines/refund-desk/refund-desk.flow.json';

/** The child: waits for a person's APPROVE or REJECT and returns { refundId, amount }. */
function childSpec(): any {
  return {
    specVersion: 1,
    id: 'refund-billing',
    context: { orderId: { type: 'string' }, amount: { type: 'number', default: 0 } },
    output: { refundId: { type: 'string' }, amount: { type: 'number' } },
    events: { APPROVE: {}, REJECT: {} },
    initial: 'await_approval',
    states: {
      await_approval: { on: { APPROVE: 'paid', REJECT: 'declined' } },
      paid: { type: 'final', output: { refundId: "'r-' + context.orderId", amount: 'context.amount' } },
      declined: { type: 'final', output: { refundId: "'none'", amount: '0' } },
    },
  };
}

/** The parent: invokes the child with its order and branches on the child's output. */
function parentSpec(): any {
  return {
    specVersion: 1,
    id: 'refund-desk',
    context: {
      orderId: { type: 'string', default: 'A1' },
      total: { type: 'number', default: 5 },
      refundId: { type: 'string', optional: true },
    },
    events: { APPROVE: {}, REJECT: {} },
    initial: 'billing',
    states: {
      billing: {
        invoke: {
          machine: 'refund-billing',
          input: { orderId: 'context.orderId', amount: 'context.total' },
          onDone: [
            { guard: "output.refundId == 'none'", target: 'declined' },
            { target: 'refunded', assign: { refundId: 'output.refundId' } },
          ],
          onError: 'declined',
        },
      },
      refunded: { type: 'final' },
      declined: { type: 'final' },
    },
  };
}

async function writeSpec(file: string, spec: unknown) {
  await mkdir(join(project.dir, file, '..'), { recursive: true });
  await writeFile(join(project.dir, file), JSON.stringify(spec, null, 2));
}

async function generateParent(edit: (spec: any) => void) {
  const spec = parentSpec();
  edit(spec);
  await writeSpec(PARENT, spec);
  const result = await project.codegen.generate(PARENT, { write: false });
  await writeSpec(PARENT, parentSpec());
  return result;
}

describe('codegen of a machine invoke', () => {
  beforeAll(async () => {
    await writeSpec(CHILD, childSpec());
    await writeSpec(PARENT, parentSpec());
    const child = await project.codegen.generate(CHILD);
    expect(child.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const parent = await project.codegen.generate(PARENT);
    expect(parent.problems.filter((p) => p.severity === 'error')).toEqual([]);
  }, 120_000);

  it("types the child actor by the child's generated input and output, imported from its module", async () => {
    const text = await readFile(join(project.dir, 'machines/refund-desk/refund-desk.machine.ts'), 'utf8');
    expect(text).toContain('import type { RefundBillingInput, RefundBillingOutput } from "../refund-billing/refund-billing.machine.js";');
    expect(text).toContain('"machine.refund-billing": fromMachine<RefundBillingInput, RefundBillingOutput>("refund-billing"),');
    expect(text).toMatch(
      /input: \(\{ context \}\): Input<"machine\.refund-billing"> => \(\{ orderId: context\.orderId, amount: context\.total \}\)/,
    );
    const child = await readFile(join(project.dir, 'machines/refund-billing/refund-billing.machine.ts'), 'utf8');
    expect(child).toContain('export interface RefundBillingOutput {');
    expect(child).toMatch(
      /output: \(\{ context \}\): RefundBillingOutput => \(\{ refundId: "r-" \+ context\.orderId, amount: context\.amount \}\)/,
    );
  });

  it('maps a value of the wrong type in the input mapping to that input field', async () => {
    const result = await generateParent((s) => {
      s.states.billing.invoke.input.orderId = 'context.total';
    });
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(['/states/billing/invoke/input/orderId']);
    expect(errors[0]!.message).toMatch(/'number' is not assignable to type 'string'/);
  }, 60_000);

  it("refuses an input field the child's context does not have, at that field", async () => {
    const result = await generateParent((s) => {
      s.states.billing.invoke.input.ordr = 'context.orderId';
    });
    expect(result.problems.map((p) => [p.code, p.path])).toEqual([['SPEC_UNKNOWN_MACHINE_INPUT', '/states/billing/invoke/input/ordr']]);
  }, 60_000);

  it("maps a guard reading a field the child's output does not declare to that guard", async () => {
    const result = await generateParent((s) => {
      s.states.billing.invoke.onDone[0].guard = "output.refund_id == 'none'";
    });
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(['/states/billing/invoke/onDone/0/guard']);
    expect(errors[0]!.message).toMatch(/Property 'refund_id' does not exist on type 'RefundBillingOutput'/);
  }, 60_000);

  it("maps a final state's output of the wrong type to that output field", async () => {
    const spec = childSpec();
    spec.states.paid.output.refundId = 'context.amount';
    await writeSpec(CHILD, spec);
    const result = await project.codegen.generate(CHILD, { write: false });
    await writeSpec(CHILD, childSpec());
    const errors = result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(errors.map((e) => e.path)).toEqual(['/states/paid/output/refundId']);
  }, 60_000);

  it('runs the generated parent and child: the approval through the parent ends both, with the typed output', async () => {
    const load = async (id: string) =>
      (await import(pathToFileURL(join(project.dir, `machines/${id}/${id}.machine.ts`)).href)) as Record<string, unknown>;
    const desk = (await load('refund-desk')).refundDesk as AnyMachineDefinition;
    const billing = (await load('refund-billing')).refundBilling as AnyMachineDefinition;
    const runtime = createRuntime({ machines: [desk, billing] });
    const session = await runtime.createSession('refund-desk');
    expect((await session.snapshot()).waitingOn).toMatchObject({ machineId: 'refund-billing', status: 'waiting' });
    await session.send({ type: 'APPROVE' });
    expect(await session.snapshot()).toMatchObject({ status: 'done', state: 'refunded', context: { refundId: 'r-A1' } });
  }, 60_000);
});
