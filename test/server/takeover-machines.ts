import { appendFileSync } from 'node:fs';
import { assign, setup } from 'xstate';
import { z } from 'zod';
import { defineMachine, defineTool, fromTool, type FlowError } from '@flowing/runtime';
import type { FlowSpecInput } from '@flowing/spec';
import { defineTestMachine } from '../helpers/runtime-machines.ts';

/**
 * Machines the multi-process tests serve from real `flowing serve` children (a project's machines/ folder re-exports
 * them). No vitest here: this module is loaded by the child processes.
 */

/**
 * idle --INC--> idle with count + 1: every accepted event is one update, so lost updates show in `count`. PING is
 * declared but handled nowhere (refused with NO_TRANSITION and logged as transition.rejected).
 */
export const leaseCounterMachine = (() => {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'lease-counter',
    context: { count: { type: 'number', default: 0 } },
    events: { INC: {}, PING: {} },
    initial: 'idle',
    states: { idle: { on: { INC: { assign: { count: 'context.count + 1' } } } } },
  };
  type Ev = { type: 'INC' } | { type: 'PING' };
  const machine = setup({ types: {} as { context: { count: number }; events: Ev } }).createMachine({
    id: 'lease-counter',
    context: { count: 0 },
    initial: 'idle',
    states: { idle: { on: { INC: { actions: assign({ count: ({ context }) => context.count + 1 }) } } } },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, []), machine });
})();

/**
 * A non-idempotent charge that takes `ms`. It appends `{ pid, key }` to the file named by FLOWING_TEST_LEDGER before
 * anything else — the count of side effects, kept outside every server process. With `stop`, it then stops its own
 * process (SIGSTOP) at exactly that point — a holder paused mid-call — and once continued (SIGCONT) answers at once.
 */
export const slowChargeTool = defineTool({
  name: 'slow_charge',
  description: 'charges slowly (test)',
  input: z.object({ ms: z.number(), stop: z.boolean().optional() }),
  output: z.object({ receipt: z.string() }),
  idempotent: false,
  retries: 0,
  timeoutMs: 120_000,
  async run({ ms, stop }, { idempotencyKey, signal }) {
    const ledger = process.env.FLOWING_TEST_LEDGER;
    if (!ledger) throw new Error('FLOWING_TEST_LEDGER is not set');
    appendFileSync(ledger, `${JSON.stringify({ pid: process.pid, key: idempotencyKey })}\n`);
    if (stop) {
      process.kill(process.pid, 'SIGSTOP');
      // Continued: answer at once, so the first thing this process does is write the call's result.
      return { receipt: `r-${process.pid}` };
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
    return { receipt: `r-${process.pid}` };
  },
});

/** idle --CHARGE{ms, stop?}--> charging (slow_charge) --> idle with `receipt` or `error` (the code). */
export const leaseSlowMachine = (() => {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'lease-slow',
    context: {
      receipt: { type: 'string', optional: true },
      error: { type: 'string', optional: true },
      ms: { type: 'number', default: 0 },
      stop: { type: 'boolean', default: false },
    },
    events: { CHARGE: { ms: { type: 'number' }, stop: { type: 'boolean', optional: true } } },
    initial: 'idle',
    states: {
      idle: { on: { CHARGE: { target: 'charging', assign: { ms: 'event.ms', stop: 'event.stop == true' } } } },
      charging: {
        invoke: {
          tool: 'slow_charge',
          input: { ms: 'context.ms', stop: 'context.stop' },
          onDone: { target: 'idle', assign: { receipt: 'output.receipt' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ctx = { receipt?: string; error?: string; ms: number; stop: boolean };
  type Ev = { type: 'CHARGE'; ms: number; stop?: boolean };
  const machine = setup({
    types: {} as { context: Ctx; events: Ev },
    actors: { 'tool.slow_charge': fromTool(slowChargeTool) },
  }).createMachine({
    id: 'lease-slow',
    context: { ms: 0, stop: false },
    initial: 'idle',
    states: {
      idle: {
        on: {
          CHARGE: {
            target: '#lease-slow.charging',
            actions: assign({ ms: ({ event }) => event.ms, stop: ({ event }) => event.stop === true }),
          },
        },
      },
      charging: {
        invoke: {
          id: 'charging',
          src: 'tool.slow_charge',
          input: ({ context }) => ({ args: { ms: context.ms, stop: context.stop } }),
          onDone: {
            target: '#lease-slow.idle',
            actions: assign({ receipt: ({ event }) => (event.output as { receipt: string }).receipt }),
          },
          onError: { target: '#lease-slow.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, [slowChargeTool]), machine });
})();
