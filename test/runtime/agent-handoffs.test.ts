import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, createScriptedProvider, type AnyMachineDefinition, type LlmProvider, type RuntimeEvent } from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { validateSpec, type FlowSpecInput } from '@flowing/spec';
import { generate } from '../../codegen/index.ts';
import { reply, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../helpers/fake-openai.ts';
import { copyProject } from '../helpers/project.ts';

/**
 * idle --USER_MESSAGE--> triage: an agent that may hand off to billing or refunds; each handoff is an onDone branch
 * to a final state of its own, an answer without a handoff ends in `answered`.
 */
const TRIAGE: FlowSpecInput = {
  specVersion: 1,
  id: 'triage-desk',
  context: {
    message: { type: 'string', optional: true },
    reason: { type: 'string', optional: true },
    handedOver: { type: 'string', optional: true },
    reply: { type: 'string', optional: true },
    error: { type: 'string', optional: true },
  },
  events: { USER_MESSAGE: { text: { type: 'string' } } },
  initial: 'idle',
  states: {
    idle: { on: { USER_MESSAGE: { target: 'triage', assign: { message: 'event.text' } } } },
    triage: {
      invoke: {
        llm: 'agent',
        system: 'You route support requests.',
        prompt: '{{ context.message }}',
        handoffs: ['billing', 'refunds'],
        maxIterations: 3,
        scripted: { handoffs: { billing: ['invoice'], refunds: ['refund', 'money back'] } },
        onDone: [
          {
            guard: "output.handoff.to == 'billing'",
            target: 'billing',
            assign: { reason: 'output.handoff.reason', handedOver: 'output.handoff.message' },
          },
          { guard: "output.handoff.to == 'refunds'", target: 'refunds', assign: { reason: 'output.handoff.reason' } },
          { target: 'answered', assign: { reply: 'output.text' } },
        ],
        onError: { target: 'failed', assign: { error: 'error.code' } },
      },
    },
    billing: { type: 'final' },
    refunds: { type: 'final' },
    answered: { type: 'final' },
    failed: { type: 'final' },
  },
};

let fake: FakeOpenAI;
let project: Awaited<ReturnType<typeof copyProject>>;
let triage: AnyMachineDefinition;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  project = await copyProject('flowing-handoffs-');
  const spec = validateSpec(TRIAGE).spec!;
  await mkdir(join(project.dir, 'machines', spec.id), { recursive: true });
  for (const file of generate(spec)) await writeFile(join(project.dir, file.path), file.text);
  triage = (await import(join(project.dir, 'machines/triage-desk/triage-desk.machine.ts'))).triageDesk;
}, 60_000);
afterAll(async () => {
  await fake?.close();
  await project?.remove();
});
afterEach(() => {
  expect(fake.pending()).toBe(0);
  expect(fake.requests.filter((r) => r.pairingError)).toEqual([]);
  fake.requests.length = 0;
});

const openai = () => createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'test-key', model: 'fake-agent', timeoutMs: 2_000 });
const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

async function route(llm: LlmProvider, text: string) {
  const runtime = createRuntime({ machines: [triage], llm });
  const session = await runtime.createSession(triage);
  await session.send({ type: 'USER_MESSAGE', text });
  const snapshot = await session.snapshot();
  const events = await session.events();
  const path = ofType(events, 'state.changed')
    .map((d) => d.state)
    .slice(1);
  return { snapshot, events, path, context: snapshot.context as Record<string, unknown> };
}

describe('handoffs chosen by the model (OpenAI-compatible server)', () => {
  it('offers one transfer_to_ tool per target and takes exactly the edge of the chosen one, in one model call', async () => {
    fake.enqueue(toolCalls([{ id: 'h1', name: 'transfer_to_refunds', arguments: '{"reason":"wants money back"}' }]));
    const { path, context, events } = await route(openai(), 'I want my money back for A1001');
    expect(path).toEqual(['triage', 'refunds']);
    expect(context.reason).toBe('wants money back');
    expect(fake.requests).toHaveLength(1);
    const offered = (fake.requests[0]!.body.tools as Array<{ function: { name: string; parameters: unknown } }>).map((t) => t.function);
    expect(offered.map((t) => t.name)).toEqual(['transfer_to_billing', 'transfer_to_refunds']);
    // The log line of the handoff: the call's completion names the target.
    expect(ofType(events, 'llm.completed')).toMatchObject([
      { handoff: { to: 'refunds', reason: 'wants money back', message: 'I want my money back for A1001' } },
    ]);
    expect(ofType(events, 'message.complete')).toEqual([]);
  });

  it('carries the last user message to the target, and hands off without a reason when none is given', async () => {
    fake.enqueue(toolCalls([{ id: 'h1', name: 'transfer_to_billing', arguments: '' }]));
    const { path, context } = await route(openai(), 'Where is my invoice?');
    expect(path).toEqual(['triage', 'billing']);
    expect(context.handedOver).toBe('Where is my invoice?');
    expect(context.reason).toBeUndefined();
  });

  it('refuses a handoff to an undeclared target with HANDOFF_UNKNOWN, logs it, and lets the model choose again', async () => {
    fake.enqueue(
      toolCalls([{ id: 'h1', name: 'transfer_to_shipping', arguments: '{"reason":"parcel"}' }]),
      toolCalls([{ id: 'h2', name: 'transfer_to_billing', arguments: '{}' }]),
    );
    const { path, events } = await route(openai(), 'My parcel and my invoice');
    expect(path).toEqual(['triage', 'billing']);
    expect(ofType(events, 'agent.step')[0]).toMatchObject({
      iteration: 1,
      toolCalls: [{ id: 'h1', name: 'transfer_to_shipping', refused: { code: 'HANDOFF_UNKNOWN' } }],
    });
    const answer = fake.requests[1]!.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'h1');
    expect(JSON.parse(answer!.content as string)).toMatchObject({ error: { code: 'HANDOFF_UNKNOWN' } });
    expect(String(JSON.parse(answer!.content as string).error.message)).toContain('transfer_to_billing, transfer_to_refunds');
  });

  it('takes the fallback edge when the model answers instead of handing off', async () => {
    fake.enqueue(reply('Our opening hours are 9 to 5.'));
    const { path, context } = await route(openai(), 'When are you open?');
    expect(path).toEqual(['triage', 'answered']);
    expect(context.reply).toBe('Our opening hours are 9 to 5.');
  });
});

describe('handoffs offline and from a provider that names an undeclared target', () => {
  it('the scripted provider picks the handoff by its keywords, in the order of the targets', async () => {
    expect((await route(createScriptedProvider(), 'I need a refund on my invoice')).path).toEqual(['triage', 'billing']);
    expect((await route(createScriptedProvider(), 'I need a REFUND please')).path).toEqual(['triage', 'refunds']);
    const answered = await route(createScriptedProvider(), 'Hello there');
    expect(answered.path).toEqual(['triage', 'answered']);
    expect(answered.context.reply).toBe('Hello there');
  });

  it('a handoff to a target the call does not declare fails the call with HANDOFF_UNKNOWN', async () => {
    const scripted = createScriptedProvider();
    const rogue: LlmProvider = {
      ...scripted,
      agent: async (request, options) => ({
        ...(await scripted.agent(request, options)),
        output: { text: '', steps: 1, handoff: { to: 'shipping', message: '' } },
      }),
    };
    const { path, context, events } = await route(rogue, 'hello');
    expect(path).toEqual(['triage', 'failed']);
    expect(context.error).toBe('HANDOFF_UNKNOWN');
    expect(ofType(events, 'llm.failed')).toMatchObject([{ error: { code: 'HANDOFF_UNKNOWN' } }]);
  });
});
