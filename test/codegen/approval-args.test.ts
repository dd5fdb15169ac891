import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setup } from 'xstate';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  contractOf,
  createMemoryStore,
  createRuntime,
  defineMachine,
  defineTool,
  fromTool,
  FlowingError,
  type ToolInvokeInfo,
} from '@flowing/runtime';
import { generate, loadToolCatalog } from '@flowing/codegen';
import { FlowSpecSchema, parseSpecText } from '@flowing/spec';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { REPO_DIR } from '../helpers/project.ts';

/**
 * Issue "One session core", item 7: nothing is evaluated from expression strings at run time. A generated module
 * carries each tool invoke's arguments as a compiled, type-checked function, which its invoke and the runtime's
 * approval request both call.
 */
describe('the arguments a person approves', () => {
  it('are a compiled function in the generated contract, which carries no expression strings', async () => {
    const tools = await loadToolCatalog(REPO_DIR);
    const spec = parseSpecText(await readFile(join(REPO_DIR, 'machines/order-support/order-support.flow.json'), 'utf8'), { tools }).spec!;
    const text = generate(spec, { tools })[0]!.text;
    const contract = text.slice(text.indexOf('  invokes: {'));
    expect(contract).not.toMatch(/input:|"context\./);
    expect(contract).toContain('refund: { tool: "issue_refund", args: toolArgs.refund },');
    expect(text).toContain('input: ({ context }): Input<"tool.issue_refund"> => ({ args: toolArgs.refund(context) }),');
    const refund = orderSupport.invokes.refund as ToolInvokeInfo;
    expect((refund.args as (context: unknown) => unknown)({ userId: 'u1', orderId: 'A1002', order: { total: 42 } })).toEqual({
      order_id: 'A1002',
      amount: 42,
    });
  });

  it("are what the contract's function returns for the approval state's context, and then exactly what is paid", async () => {
    const refund = orderSupport.invokes.refund as ToolInvokeInfo;
    const seen: unknown[] = [];
    const args = (context: never) => {
      seen.push(context);
      return (refund.args as (context: unknown) => unknown)(context);
    };
    const definition = defineMachine({ ...orderSupport, invokes: { ...orderSupport.invokes, refund: { ...refund, args } } });
    const runtime = createRuntime({ machines: [definition], store: createMemoryStore() });
    const session = await runtime.createSession(definition);
    await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
    const waiting = await session.snapshot();
    expect(seen).toEqual([expect.objectContaining({ orderId: 'A1002' })]);
    const total = (waiting.context as { order: { total: number } }).order.total;
    expect(waiting.approval).toMatchObject({ state: 'await_approval', tool: 'issue_refund', args: { order_id: 'A1002', amount: total } });
    await session.send({ type: 'APPROVE' });
    const paid = (await session.events()).find((e) => e.type === 'tool.completed' && (e.data as { tool?: string }).tool === 'issue_refund');
    expect(paid).toBeDefined();
    expect((await session.snapshot()).approval).toMatchObject({ decision: 'approved', consumed: true });
  });

  it('come from the spec for a machine written by hand: its input mapping parsed once, at load', () => {
    const spec = FlowSpecSchema.parse({
      specVersion: 1,
      id: 'by-hand',
      context: { total: { type: 'number', default: 0 }, note: { type: 'string', optional: true } },
      initial: 'paying',
      states: {
        paying: { invoke: { tool: 'pay', input: { amount: 'context.total * 2', memo: "context.note ?? 'none'" }, onDone: 'done' } },
        done: { type: 'final' },
      },
    });
    const paying = contractOf(spec).invokes.paying as ToolInvokeInfo;
    expect(paying).not.toHaveProperty('input');
    expect((paying.args as (context: unknown) => unknown)({ total: 5 })).toEqual({ amount: 10, memo: 'none' });
    const broken = structuredClone(spec);
    (broken.states.paying!.invoke as { input: Record<string, string> }).input.amount = 'context.total *';
    expect(() => contractOf(broken)).toThrow(
      expect.objectContaining({ code: 'MACHINE_INVALID', message: expect.stringContaining("input 'amount' of state 'paying'") }),
    );
  });

  it('are never ambiguous: the runtime refuses a machine written by hand whose APPROVE can lead to two high-risk calls', () => {
    const risky = (name: string) =>
      defineTool({
        name,
        description: name,
        risk: 'high',
        idempotent: false,
        input: z.object({ id: z.string() }),
        output: z.object({ ok: z.boolean() }),
        async run() {
          return { ok: true };
        },
      });
    const [cancel, rebook] = [risky('cancel_ticket'), risky('update_ticket_to_new_flight')];
    const spec = FlowSpecSchema.parse({
      specVersion: 1,
      id: 'ticket-desk',
      context: { id: { type: 'string', default: 't1' }, cancel: { type: 'boolean', default: true } },
      events: { APPROVE: {} },
      initial: 'confirm',
      states: {
        confirm: { on: { APPROVE: [{ guard: 'context.cancel', target: 'cancelling' }, { target: 'rebooking' }] } },
        cancelling: { invoke: { tool: 'cancel_ticket', input: { id: 'context.id' }, onDone: 'confirm' } },
        rebooking: { invoke: { tool: 'update_ticket_to_new_flight', input: { id: 'context.id' }, onDone: 'confirm' } },
      },
    });
    const machine = setup({
      types: {} as { context: { id: string; cancel: boolean }; events: { type: 'APPROVE' } },
      actors: { 'tool.cancel_ticket': fromTool(cancel), 'tool.update_ticket_to_new_flight': fromTool(rebook) },
    }).createMachine({
      id: 'ticket-desk',
      context: { id: 't1', cancel: true },
      initial: 'confirm',
      states: {
        confirm: { on: { APPROVE: [{ guard: ({ context }) => context.cancel, target: 'cancelling' }, { target: 'rebooking' }] } },
        cancelling: {
          invoke: {
            id: 'cancelling',
            src: 'tool.cancel_ticket',
            input: ({ context }) => ({ args: { id: context.id } }),
            onDone: 'confirm',
          },
        },
        rebooking: {
          invoke: {
            id: 'rebooking',
            src: 'tool.update_ticket_to_new_flight',
            input: ({ context }) => ({ args: { id: context.id } }),
            onDone: 'confirm',
          },
        },
      },
    });
    const definition = defineMachine({
      id: 'ticket-desk',
      specHash: 'x',
      spec,
      machine,
      tools: { cancel_ticket: cancel, update_ticket_to_new_flight: rebook },
    });
    let refusal: unknown;
    try {
      createRuntime({ machines: [definition], store: createMemoryStore() });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(FlowingError);
    expect(refusal).toMatchObject({ code: 'MACHINE_INVALID' });
    expect((refusal as Error).message).toMatch(/APPROVE in state 'confirm'.*'cancel_ticket'.*'update_ticket_to_new_flight'/);
  });
});
