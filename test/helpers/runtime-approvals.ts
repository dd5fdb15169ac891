import { assign, setup } from 'xstate';
import { z } from 'zod';
import { defineMachine, defineTool, fromTool, type AnyTool, type FlowError } from '@flowing/runtime';
import type { FlowSpecInput } from '@flowing/spec';
import { defineTestMachine } from './runtime-machines.ts';

/** A high-risk, non-idempotent `pay` tool that records every payment it makes (the side-effect ledger). */
export function payTool() {
  const paid: Array<{ amount: number }> = [];
  const tool = defineTool({
    name: 'pay',
    description: 'moves money',
    risk: 'high',
    idempotent: false,
    input: z.object({ amount: z.number() }),
    output: z.object({ receipt: z.string() }),
    async run(input) {
      paid.push(input);
      return { receipt: `r-${paid.length}` };
    },
  });
  return { tool, paid };
}

/**
 * The approval machine with two holes a model could use, which only the runtime's approval checks close:
 * AMEND changes the amount while the approval is pending (the approved arguments are no longer the paid ones), and
 * PAY_AGAIN goes back from idle into `paying` without a new APPROVE (one approval would pay twice).
 * idle --REQUEST{amount}--> await_approval --APPROVE--> paying (high-risk `pay`) --> idle.
 */
export function leakyApprovalMachine(pay: AnyTool) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'leaky-approvals',
    context: {
      amount: { type: 'number', default: 0 },
      paid: { type: 'string', optional: true },
      error: { type: 'string', optional: true },
    },
    events: { REQUEST: { amount: { type: 'number' } }, AMEND: { amount: { type: 'number' } }, APPROVE: {}, REJECT: {}, PAY_AGAIN: {} },
    initial: 'idle',
    states: {
      idle: { on: { REQUEST: { target: 'await_approval', assign: { amount: 'event.amount' } }, PAY_AGAIN: 'paying' } },
      await_approval: { on: { APPROVE: 'paying', REJECT: 'idle', AMEND: { assign: { amount: 'event.amount' } } } },
      paying: {
        invoke: {
          tool: pay.name,
          input: { amount: 'context.amount' },
          onDone: { target: 'idle', assign: { paid: 'output.receipt' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ctx = { amount: number; paid?: string; error?: string };
  type Ev =
    | { type: 'REQUEST'; amount: number }
    | { type: 'AMEND'; amount: number }
    | { type: 'APPROVE' }
    | { type: 'REJECT' }
    | { type: 'PAY_AGAIN' };
  const machine = setup({
    types: {} as { context: Ctx; events: Ev },
    actors: { [`tool.${pay.name}`]: fromTool(pay) },
  }).createMachine({
    id: 'leaky-approvals',
    context: { amount: 0 },
    initial: 'idle',
    states: {
      idle: {
        on: {
          REQUEST: {
            target: '#leaky-approvals.await_approval',
            actions: assign({ amount: ({ event }) => event.amount, paid: undefined, error: undefined }),
          },
          PAY_AGAIN: { target: '#leaky-approvals.paying', actions: assign({ paid: undefined, error: undefined }) },
        },
      },
      await_approval: {
        on: {
          APPROVE: { target: '#leaky-approvals.paying' },
          REJECT: { target: '#leaky-approvals.idle' },
          AMEND: { actions: assign({ amount: ({ event }) => event.amount }) },
        },
      },
      paying: {
        invoke: {
          id: 'paying',
          src: `tool.${pay.name}`,
          input: ({ context }) => ({ args: { amount: context.amount } }),
          onDone: {
            target: '#leaky-approvals.idle',
            actions: assign({ paid: ({ event }) => (event.output as { receipt: string }).receipt }),
          },
          onError: { target: '#leaky-approvals.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, [pay]), machine });
}
