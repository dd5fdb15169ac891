import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, createScriptedProvider, type AnyMachineDefinition } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { editJsonFile, useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject();
const SPEC = 'machines/order-support/order-support.flow.json';

/**
 * order-support with one model call where it had two: the first message is read by one extract call whose fields are
 * the intent (an enum) and the order id, instead of a classify call followed by an extract call. A follow-up message
 * that only brings the order id still goes to `extract_order_id`.
 */
function lean(spec: any) {
  const states = spec.states.active.states;
  const { classify, extract_order_id } = states;
  states.classify = {
    invoke: {
      llm: 'extract',
      input: classify.invoke.input,
      prompt: 'Read a message to an order support desk: what the customer wants, and the order number if they give one.',
      fields: { intent: { type: 'enum', values: classify.invoke.labels }, ...extract_order_id.invoke.fields },
      scripted: { keywords: classify.invoke.scripted.keywords, patterns: extract_order_id.invoke.scripted.patterns },
      onDone: [
        { guard: "output.intent == 'other'", target: 'small_talk', assign: { intent: 'output.intent' } },
        { guard: 'output.orderId == undefined', target: 'ask_order_id', assign: { intent: 'output.intent' } },
        { target: 'resolve_user', assign: { intent: 'output.intent', orderId: 'output.orderId' } },
      ],
      onError: classify.invoke.onError,
    },
  };
}

const REQUESTS = {
  'order query': ['Where is my order A1001?'],
  'order query, id asked for': ['Where is my order?', 'It is A1001'],
  refund: ['I want a refund for A1001'],
  other: ['Hello there'],
} as const;

/** Model calls per message of each request kind, and where each conversation ends (state and reply). */
async function measure(machine: AnyMachineDefinition) {
  const calls: Record<string, number[]> = {};
  const ends: Record<string, unknown> = {};
  for (const [kind, messages] of Object.entries(REQUESTS)) {
    const runtime = createRuntime({ machines: [machine], llm: createScriptedProvider() });
    const session = await runtime.createSession(machine);
    calls[kind] = [];
    for (const text of messages) {
      const seen = (await session.events()).length;
      await session.send({ type: 'USER_MESSAGE', text });
      calls[kind].push((await session.events()).slice(seen).filter((e) => e.type === 'llm.started').length);
    }
    const snapshot = await session.snapshot();
    const context = snapshot.context as Record<string, unknown>;
    ends[kind] = { state: snapshot.state, reply: context.reply, orderId: context.orderId, intent: context.intent };
  }
  return { calls, ends };
}

describe('order-support with structured output: model calls per request', () => {
  it('needs at most 2 model calls for every request kind and ends every conversation where the example does', async () => {
    const specPath = join(project.dir, SPEC);
    await editJsonFile(specPath, lean);
    const result = await project.codegen.generate(SPEC);
    expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const module = (await import(pathToFileURL(join(project.dir, 'machines/order-support/order-support.machine.ts')).href)) as {
      orderSupport: AnyMachineDefinition;
    };

    const before = await measure(orderSupport);
    const after = await measure(module.orderSupport);
    console.log(`model calls per message, before: ${JSON.stringify(before.calls)}; after: ${JSON.stringify(after.calls)}`);
    expect(before.calls).toEqual({ 'order query': [3], 'order query, id asked for': [2, 2], refund: [2], other: [2] });
    expect(after.calls).toEqual({ 'order query': [2], 'order query, id asked for': [1, 2], refund: [1], other: [2] });
    expect(after.ends).toEqual(before.ends);
    expect(Object.values(after.ends).map((end: any) => end.reply)).toEqual([
      expect.stringContaining('A1001'),
      expect.stringContaining('A1001'),
      expect.stringContaining('approval'),
      expect.stringContaining('orders'),
    ]);
  }, 120_000);
});
