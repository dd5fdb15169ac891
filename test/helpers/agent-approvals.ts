import { assign, setup } from 'xstate';
import { z } from 'zod';
import { defineTool, fromLlm, type AnyTool, type FlowError } from '@flowing/runtime';
import type { FlowSpecInput } from '@flowing/spec';
import { defineTestMachine } from './runtime-machines.ts';

/** A high-risk, non-idempotent `pay` tool (account bound from context) and a harmless `balance`; both record their runs. */
export function payTools() {
  const paid: Array<{ amount: number; account: string }> = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an amount to the customer account',
    risk: 'high',
    idempotent: false,
    input: z.object({ amount: z.number(), account: z.string() }),
    output: z.object({ receipt: z.string() }),
    async run(input) {
      paid.push(input);
      return { receipt: `r-${paid.length}` };
    },
  });
  const balance = defineTool({
    name: 'balance',
    description: 'Reads the balance',
    idempotent: true,
    input: z.object({}),
    output: z.object({ balance: z.number() }),
    async run() {
      return { balance: 100 };
    },
  });
  return { pay, balance, paid };
}

/**
 * idle --ASK{text}--> helping: an agent over `balance` (when given) and high-risk `pay` (its `account` bound to
 * context.account unless `bindAccount: false`).
 */
export function payAgent(t: { pay: AnyTool; balance?: AnyTool }, options: { bindAccount?: boolean } = {}) {
  const bindAccount = options.bindAccount ?? true;
  const names = t.balance ? ['balance', 'pay'] : ['pay'];
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'pay-agent',
    context: {
      account: { type: 'string', default: 'ACC-1' },
      text: { type: 'string', optional: true },
      answer: { type: 'string', optional: true },
      error: { type: 'string', optional: true },
    },
    events: { ASK: { text: { type: 'string' } }, APPROVE: {}, REJECT: { reason: { type: 'string', optional: true } }, STOP: {} },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: 'helping', assign: { text: 'event.text' } } } },
      helping: {
        on: { STOP: 'idle' },
        invoke: {
          llm: 'agent',
          prompt: '{{ context.text }}',
          tools: [...names.slice(0, -1), bindAccount ? { tool: 'pay', bind: { account: 'context.account' } } : 'pay'],
          maxIterations: 4,
          onDone: { target: 'idle', assign: { answer: 'output.text' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ctx = { account: string; text?: string; answer?: string; error?: string };
  const machine = setup({
    types: {} as {
      context: Ctx;
      events: { type: 'ASK'; text: string } | { type: 'APPROVE' } | { type: 'REJECT'; reason?: string } | { type: 'STOP' };
    },
    actors: { 'llm.agent': fromLlm('agent') },
  }).createMachine({
    id: 'pay-agent',
    context: { account: 'ACC-1' },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: '#pay-agent.helping', actions: assign({ text: ({ event }) => event.text }) } } },
      helping: {
        on: { STOP: '#pay-agent.idle' },
        invoke: {
          id: 'helping',
          src: 'llm.agent',
          input: ({ context }) => ({
            kind: 'agent' as const,
            prompt: context.text ?? '',
            tools: names,
            ...(bindAccount ? { bound: { pay: { account: context.account } } } : {}),
            maxIterations: 4,
          }),
          onDone: { target: '#pay-agent.idle', actions: assign({ answer: ({ event }) => (event.output as { text: string }).text }) },
          onError: { target: '#pay-agent.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineTestMachine(spec, machine, t.balance ? [t.pay, t.balance] : [t.pay]);
}
