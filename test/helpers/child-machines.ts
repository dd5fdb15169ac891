import { assign, setup } from 'xstate';
import { z } from 'zod';
import {
  defineMachine,
  defineTool,
  fromMachine,
  fromTool,
  type AnyMachineDefinition,
  type AnyTool,
  type FlowError,
} from '@flowing/runtime';
import type { FlowSpecInput } from '@flowing/spec';
import { ledgerTool } from './crash-point-machines.ts';
import { payTool } from './runtime-approvals.ts';
import { defineTestMachine } from './runtime-machines.ts';

/** An idempotent `lookup` tool that counts its calls and can be held until `release()`. */
export function lookupTool() {
  const state = { calls: 0, hold: false, waiting: [] as Array<() => void> };
  const tool = defineTool({
    name: 'lookup',
    description: 'finds an order',
    idempotent: true,
    input: z.object({ orderId: z.string() }),
    output: z.object({ amount: z.number() }),
    async run(input, { signal }) {
      state.calls++;
      if (state.hold)
        await new Promise<void>((resolve, reject) => {
          state.waiting.push(resolve);
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        });
      if (input.orderId === 'missing') throw new Error('no such order');
      return { amount: 42 };
    },
  });
  return {
    tool,
    state,
    release() {
      state.hold = false;
      for (const resume of state.waiting.splice(0)) resume();
    },
  };
}

type BillingCtx = { orderId: string; amount: number; refundId?: string; broken?: boolean };
type BillingEv = { type: 'APPROVE' } | { type: 'REJECT' };

/**
 * The child, `billing`: lookup (idempotent tool) -> await_approval --APPROVE--> refund (high-risk `pay`) -> paid
 * (final, output { refundId, amount }); REJECT -> declined (final, output { refundId: 'none', amount: 0 }).
 * `broken: true` in its input makes its entry throw: the session ends in `error`.
 */
export function billingMachine(lookup: AnyTool, pay: AnyTool): AnyMachineDefinition {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'billing',
    context: {
      orderId: { type: 'string' },
      amount: { type: 'number', default: 0 },
      refundId: { type: 'string', optional: true },
      broken: { type: 'boolean', optional: true },
    },
    output: { refundId: { type: 'string' }, amount: { type: 'number' } },
    events: { APPROVE: {}, REJECT: {} },
    initial: 'lookup',
    states: {
      lookup: {
        invoke: {
          tool: 'lookup',
          input: { orderId: 'context.orderId' },
          onDone: { target: 'await_approval', assign: { amount: 'output.amount' } },
        },
      },
      await_approval: { on: { APPROVE: 'refund', REJECT: 'declined' } },
      refund: {
        invoke: { tool: 'pay', input: { amount: 'context.amount' }, onDone: { target: 'paid', assign: { refundId: 'output.receipt' } } },
      },
      paid: { type: 'final', output: { refundId: "context.refundId ?? ''", amount: 'context.amount' } },
      declined: { type: 'final', output: { refundId: "'none'", amount: '0' } },
    },
  };
  const machine = setup({
    types: {} as {
      context: BillingCtx;
      events: BillingEv;
      input: { orderId: string; broken?: boolean };
      output: { refundId: string; amount: number };
    },
    actors: { 'tool.lookup': fromTool(lookup), 'tool.pay': fromTool(pay) },
  }).createMachine({
    id: 'billing',
    context: ({ input }) => {
      if (input.broken) throw new Error('billing cannot start: broken input');
      return { amount: 0, ...input };
    },
    initial: 'lookup',
    output: ({ event }) => (event as unknown as { output: { refundId: string; amount: number } }).output,
    states: {
      lookup: {
        invoke: {
          id: 'lookup',
          src: 'tool.lookup',
          input: ({ context }) => ({ args: { orderId: context.orderId } }),
          onDone: { target: 'await_approval', actions: assign({ amount: ({ event }) => (event.output as { amount: number }).amount }) },
        },
      },
      await_approval: { on: { APPROVE: 'refund', REJECT: 'declined' } },
      refund: {
        invoke: {
          id: 'refund',
          src: 'tool.pay',
          input: ({ context }) => ({ args: { amount: context.amount } }),
          onDone: { target: 'paid', actions: assign({ refundId: ({ event }) => (event.output as { receipt: string }).receipt }) },
        },
      },
      paid: { type: 'final', output: ({ context }) => ({ refundId: context.refundId ?? '', amount: context.amount }) },
      declined: { type: 'final', output: () => ({ refundId: 'none', amount: 0 }) },
    },
  });
  return defineMachine<typeof machine, BillingEv>({ ...defineTestMachine(spec, machine, [lookup, pay]), machine });
}

type DeskCtx = { orderId: string; broken?: boolean; refundId?: string; error?: string };
type DeskEv = { type: 'START'; orderId: string; broken?: boolean } | { type: 'APPROVE' } | { type: 'REJECT' } | { type: 'CANCEL' };

/**
 * The parent, `desk`: idle --START--> billing (invokes machine `billing`) -> refunded (final) or declined / failed;
 * CANCEL in `billing` leaves the state (which cancels the child). `child` sets which machine it invokes and `auto`
 * starts it in `billing` (for the depth test, a desk that invokes itself).
 */
export function deskMachine(options: { id?: string; child?: string; auto?: boolean } = {}): AnyMachineDefinition {
  const id = options.id ?? 'desk';
  const child = options.child ?? 'billing';
  const initial = options.auto ? 'billing' : 'idle';
  const spec: FlowSpecInput = {
    specVersion: 1,
    id,
    context: {
      orderId: { type: 'string', default: '' },
      broken: { type: 'boolean', optional: true },
      refundId: { type: 'string', optional: true },
      error: { type: 'string', optional: true },
    },
    output: { refundId: { type: 'string' }, amount: { type: 'number' } },
    events: { START: { orderId: { type: 'string' }, broken: { type: 'boolean', optional: true } }, APPROVE: {}, REJECT: {}, CANCEL: {} },
    initial,
    states: {
      idle: { on: { START: { target: 'billing', assign: { orderId: 'event.orderId', broken: 'event.broken' } } } },
      billing: {
        on: { CANCEL: 'stopped' },
        invoke: {
          machine: child,
          input: { orderId: 'context.orderId', broken: 'context.broken' },
          onDone: [
            { guard: "output.refundId == 'none'", target: 'declined' },
            { target: 'refunded', assign: { refundId: 'output.refundId' } },
          ],
          onError: { target: 'failed', assign: { error: 'error.code' } },
        },
      },
      refunded: { type: 'final', output: { refundId: "context.refundId ?? ''", amount: '1' } },
      declined: { type: 'final', output: { refundId: "'none'", amount: '0' } },
      failed: { type: 'final', output: { refundId: "'none'", amount: '0' } },
      stopped: { type: 'final', output: { refundId: "'none'", amount: '0' } },
    },
  };
  type Out = { refundId: string; amount: number };
  const none = () => ({ refundId: 'none', amount: 0 });
  const machine = setup({
    types: {} as { context: DeskCtx; events: DeskEv; input: Partial<DeskCtx> | undefined; output: Out },
    actors: { [`machine.${child}`]: fromMachine<{ orderId: string; broken?: boolean }, Out>(child) },
  }).createMachine({
    id,
    context: ({ input }) => ({ orderId: '', ...input }),
    initial,
    output: ({ event }) => (event as unknown as { output: Out }).output,
    states: {
      idle: {
        on: {
          START: {
            target: 'billing',
            actions: assign({ orderId: ({ event }) => event.orderId, broken: ({ event }) => event.broken }),
          },
        },
      },
      billing: {
        on: { CANCEL: 'stopped' },
        invoke: {
          id: 'billing',
          src: `machine.${child}`,
          input: ({ context }) => ({ orderId: context.orderId, ...(context.broken ? { broken: true } : {}) }),
          onDone: [
            { guard: ({ event }) => (event.output as Out).refundId === 'none', target: 'declined' },
            { target: 'refunded', actions: assign({ refundId: ({ event }) => (event.output as Out).refundId }) },
          ],
          onError: { target: 'failed', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
      refunded: { type: 'final', output: ({ context }) => ({ refundId: context.refundId ?? '', amount: 1 }) },
      declined: { type: 'final', output: none },
      failed: { type: 'final', output: none },
      stopped: { type: 'final', output: none },
    },
  });
  return defineMachine<typeof machine, DeskEv>({ ...defineTestMachine(spec, machine, []), machine });
}

/** The `desk` and `billing` machines with their tools: the side-effect ledger is `pay.paid`, lookups `lookup.state.calls`. */
export function childMachines() {
  const lookup = lookupTool();
  const pay = payTool();
  return { lookup, pay, billing: billingMachine(lookup.tool, pay.tool), desk: deskMachine() };
}

/** `desk` and `billing` whose `pay` (high-risk, not idempotent) writes each run to a ledger file outside the process. */
export function crashChildMachines(ledger: string) {
  const lookup = lookupTool();
  const pay = ledgerTool('pay', ledger, { idempotent: false, risk: 'high' });
  return { desk: deskMachine(), billing: billingMachine(lookup.tool, pay as AnyTool) };
}
