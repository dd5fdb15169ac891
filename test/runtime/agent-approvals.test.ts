import { setup, assign } from 'xstate';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMemoryStore,
  createRuntime,
  defineTool,
  fromLlm,
  type FlowError,
  type RuntimeEvent,
  type SessionStore,
} from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import type { FlowSpecInput } from '@flowing/spec';
import { reply, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../helpers/fake-openai.ts';
import { defineTestMachine } from '../helpers/runtime-machines.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  expect(fake.pending()).toBe(0);
  expect(fake.requests.filter((r) => r.pairingError)).toEqual([]);
  fake.requests.length = 0;
});

const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);
const openai = () => createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'test-key', model: 'fake-agent', timeoutMs: 2_000 });

/** A high-risk, non-idempotent `pay` tool (account bound from context) and a harmless `balance`; both record their runs. */
function tools() {
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

/** idle --ASK{text}--> helping: an agent over `balance` and high-risk `pay` (account bound to context.account). */
function payAgent(t: ReturnType<typeof tools>) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'pay-agent',
    context: {
      account: { type: 'string', default: 'ACC-1' },
      text: { type: 'string', optional: true },
      answer: { type: 'string', optional: true },
      error: { type: 'string', optional: true },
    },
    events: { ASK: { text: { type: 'string' } }, APPROVE: {}, REJECT: { reason: { type: 'string', optional: true } } },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: 'helping', assign: { text: 'event.text' } } } },
      helping: {
        invoke: {
          llm: 'agent',
          prompt: '{{ context.text }}',
          tools: ['balance', { tool: 'pay', bind: { account: 'context.account' } }],
          maxIterations: 4,
          onDone: { target: 'idle', assign: { answer: 'output.text' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ctx = { account: string; text?: string; answer?: string; error?: string };
  const machine = setup({
    types: {} as { context: Ctx; events: { type: 'ASK'; text: string } | { type: 'APPROVE' } | { type: 'REJECT'; reason?: string } },
    actors: { 'llm.agent': fromLlm('agent') },
  }).createMachine({
    id: 'pay-agent',
    context: { account: 'ACC-1' },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: '#pay-agent.helping', actions: assign({ text: ({ event }) => event.text }) } } },
      helping: {
        invoke: {
          id: 'helping',
          src: 'llm.agent',
          input: ({ context }) => ({
            kind: 'agent' as const,
            prompt: context.text ?? '',
            tools: ['balance', 'pay'],
            bound: { pay: { account: context.account } },
            maxIterations: 4,
          }),
          onDone: { target: '#pay-agent.idle', actions: assign({ answer: ({ event }) => (event.output as { text: string }).text }) },
          onError: { target: '#pay-agent.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineTestMachine(spec, machine, [t.pay, t.balance]);
}

function start(store: SessionStore = createMemoryStore()) {
  const t = tools();
  const machine = payAgent(t);
  const runtime = createRuntime({ machines: [machine], llm: openai(), store });
  return { ...t, machine, runtime, store };
}

describe('high-risk tools the model proposes', () => {
  it('stops with a pending approval naming the tool and the exact arguments; APPROVE runs exactly that call once', async () => {
    fake.enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":30}' }]), reply('Paid 30.'));
    const { runtime, machine, paid } = start();
    const session = await runtime.createSession(machine);
    const asked = await session.send({ type: 'ASK', text: 'pay me 30' });
    expect(asked).toMatchObject({ applied: true, status: 'waiting' });
    const waiting = await session.snapshot();
    expect(waiting.approval).toMatchObject({ tool: 'pay', args: { amount: 30, account: 'ACC-1' }, callId: 'helping@2/1' });
    expect(waiting.approval?.decision).toBeUndefined();
    expect(paid).toEqual([]);
    expect(fake.requests).toHaveLength(1);

    const approved = await session.send({ type: 'APPROVE' });
    expect(approved).toMatchObject({ applied: true, state: 'idle' });
    const done = await session.snapshot();
    expect(paid).toEqual([{ amount: 30, account: 'ACC-1' }]);
    expect(done.context).toMatchObject({ answer: 'Paid 30.' });
    expect(done.approval).toMatchObject({ decision: 'approved', consumed: true });
    const events = await session.events();
    const requested = ofType(events, 'approval.requested')[0]!;
    expect(ofType(events, 'approval.decided')).toMatchObject([{ approvalId: requested.approvalId, decision: 'approved' }]);
    expect(ofType(events, 'tool.started')).toMatchObject([{ callId: 'helping@2/1', tool: 'pay', args: { amount: 30, account: 'ACC-1' } }]);
    // One model call per turn of the loop: the proposal, then the answer after the payment.
    expect(fake.requests).toHaveLength(2);
    const answer = fake.requests[1]!.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'p1');
    expect(JSON.parse(answer!.content as string)).toEqual({ receipt: 'r-1' });
    // A second APPROVE finds nothing to decide.
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: false });
    expect(paid).toHaveLength(1);
  });
});
