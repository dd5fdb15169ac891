import { z } from 'zod';
import { assign, setup } from 'xstate';
import { defineMachine, defineTool, fromTool, type AnyTool, type FlowError } from '@flowing/runtime';
import type { FlowSpecInput } from '@flowing/spec';
import { defineTestMachine } from './runtime-machines.ts';

/** A `quote` tool answering `{ total }` with the amount it is asked for (or failing with QUOTE_FAILED when told to). */
export function quoteTool() {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'quote',
    description: 'prices an order',
    idempotent: true,
    retries: 0,
    input: z.object({ amount: z.number(), fail: z.boolean().optional() }),
    output: z.object({ total: z.number() }),
    errors: { QUOTE_FAILED: 'the quote service said no' },
    async run(input) {
      calls.push(input);
      if (input.fail) throw Object.assign(new Error('the quote service said no'), { code: 'QUOTE_FAILED' });
      return { total: input.amount };
    },
  });
  return { tool, calls };
}

/**
 * idle --CHECK{amount, fail?}--> checking (invokes `quote`); onDone only `output.total <= 100 -> approved` and
 * onError only `error.code == 'OTHER' -> failed`: a total over 100, or a QUOTE_FAILED error, matches no branch.
 * With `assignThrows`, the onDone assignment throws (an action failing on the machine's own event, not one sent).
 */
export function guardedDoneMachine(quote: AnyTool, options: { assignThrows?: boolean } = {}) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'guarded-done',
    context: {
      amount: { type: 'number', default: 0 },
      fail: { type: 'boolean', default: false },
      total: { type: 'number', optional: true },
    },
    events: { CHECK: { amount: { type: 'number' }, fail: { type: 'boolean', optional: true } }, RESET: {} },
    initial: 'idle',
    states: {
      idle: { on: { CHECK: { target: 'checking', assign: { amount: 'event.amount' } } } },
      checking: {
        invoke: {
          tool: quote.name,
          input: { amount: 'context.amount' },
          onDone: [{ guard: 'output.total <= 100', target: 'approved', assign: { total: 'output.total' } }],
          onError: [{ guard: "error.code == 'OTHER'", target: 'idle' }],
        },
      },
      approved: { on: { RESET: 'idle' } },
    },
  };
  type Ctx = { amount: number; fail: boolean; total?: number };
  type Ev = { type: 'CHECK'; amount: number; fail?: boolean } | { type: 'RESET' };
  const machine = setup({
    types: {} as { context: Ctx; events: Ev },
    actors: { [`tool.${quote.name}`]: fromTool(quote) },
  }).createMachine({
    id: 'guarded-done',
    context: { amount: 0, fail: false },
    initial: 'idle',
    states: {
      idle: {
        on: {
          CHECK: {
            target: '#guarded-done.checking',
            actions: assign({ amount: ({ event }) => event.amount, fail: ({ event }) => event.fail ?? false }),
          },
        },
      },
      checking: {
        invoke: {
          id: 'checking',
          src: `tool.${quote.name}`,
          input: ({ context }) => ({ args: { amount: context.amount, ...(context.fail ? { fail: true } : {}) } }),
          onDone: [
            {
              guard: ({ event }) => (event.output as { total: number }).total <= 100,
              target: '#guarded-done.approved',
              actions: assign({
                total: ({ event }) => {
                  if (options.assignThrows) throw new TypeError('total is not a number');
                  return (event.output as { total: number }).total;
                },
              }),
            },
          ],
          onError: [{ guard: ({ event }) => (event.error as FlowError).code === 'OTHER', target: '#guarded-done.idle' }],
        },
      },
      approved: { on: { RESET: { target: '#guarded-done.idle' } } },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, [quote]), machine });
}

/**
 * idle --GO--> (named guard `isAllowed`) busy, with the named action `notify` on the way; PING stays in idle with
 * the named action `record` (behind an inline guard). Each throws when told to, the way a scaffolded stub does.
 */
export function throwingImplMachine(throws: { guard?: boolean; action?: boolean; initialGuard?: boolean; inlineGuard?: boolean }) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'throwing-impl',
    context: { pings: { type: 'number', default: 0 } },
    events: { GO: {}, PING: {} },
    initial: 'start',
    states: {
      start: { always: [{ guard: { ref: 'isReady' }, target: 'idle' }] },
      idle: { on: { GO: { guard: { ref: 'isAllowed' }, target: 'busy', actions: ['notify'] }, PING: { actions: ['record'] } } },
      busy: {},
    },
    guards: { isReady: { description: 'always true unless it throws' }, isAllowed: { description: 'throws when told to' } },
    actions: { notify: { description: 'throws when told to' }, record: { description: 'counts pings' } },
  };
  const machine = setup({
    types: {} as { context: { pings: number }; events: { type: 'GO' } | { type: 'PING' } },
    guards: {
      isReady: () => {
        if (throws.initialGuard) throw new Error('isReady is not implemented yet');
        return true;
      },
      isAllowed: () => {
        if (throws.guard) throw new Error('isAllowed is not implemented yet');
        return true;
      },
    },
    actions: {
      notify: () => {
        if (throws.action) throw new Error('notify is not implemented yet');
      },
      record: assign({ pings: ({ context }) => context.pings + 1 }),
    },
  }).createMachine({
    id: 'throwing-impl',
    context: { pings: 0 },
    initial: 'start',
    states: {
      start: { always: [{ guard: 'isReady', target: '#throwing-impl.idle' }] },
      idle: {
        on: {
          GO: { guard: 'isAllowed', target: '#throwing-impl.busy', actions: ['notify'] },
          // An inline guard, as generated code writes expressions; with `inlineGuard` it fails like a bad member access.
          PING: {
            guard: () => {
              if (throws.inlineGuard) throw new TypeError("Cannot read properties of undefined (reading 'deep')");
              return true;
            },
            actions: ['record'],
          },
        },
      },
      busy: {},
    },
  });
  return defineMachine<typeof machine, { type: 'GO' } | { type: 'PING' }>({ ...defineTestMachine(spec, machine, []), machine });
}

/** A machine whose initial state invokes `tool` (so `createSession` waits for the call): calling --done--> idle. */
export function startsWithCallMachine(tool: AnyTool) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'starts-with-call',
    events: { PING: {} },
    initial: 'calling',
    states: {
      calling: { invoke: { tool: tool.name, onDone: 'idle', onError: 'idle' } },
      idle: { on: { PING: 'idle' } },
    },
  };
  const machine = setup({
    types: {} as { events: { type: 'PING' } },
    actors: { [`tool.${tool.name}`]: fromTool(tool) },
  }).createMachine({
    id: 'starts-with-call',
    initial: 'calling',
    states: {
      calling: {
        invoke: {
          id: 'calling',
          src: `tool.${tool.name}`,
          input: () => ({ args: {} }),
          onDone: { target: '#starts-with-call.idle' },
          onError: { target: '#starts-with-call.idle' },
        },
      },
      idle: { on: { PING: { target: '#starts-with-call.idle' } } },
    },
  });
  return defineMachine<typeof machine, { type: 'PING' }>({ ...defineTestMachine(spec, machine, [tool]), machine });
}
