import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import {
  appendMessage,
  createRuntime,
  createScriptedProvider,
  createVirtualClock,
  fromLlm,
  replaySession,
  type ConversationMessage,
} from '@flowing/runtime';
import type { FlowSpecInput } from '@flowing/spec';
import { traceShipment } from '../../tools/trace_shipment.ts';
import { defineTestMachine } from '../helpers/runtime-machines.ts';

const OUTPUT = { intent: { type: 'enum' as const, values: ['track', 'other'] } };

const spec: FlowSpecInput = {
  specVersion: 1,
  id: 'triage-chat',
  context: { conversation: { type: 'conversation' }, intent: { type: 'string', optional: true } },
  events: { USER_MESSAGE: { text: { type: 'string' } } },
  initial: 'idle',
  states: {
    idle: { on: { USER_MESSAGE: { target: 'triage', assign: { conversation: 'append(context.conversation, event.text)' } } } },
    triage: {
      invoke: {
        llm: 'agent',
        history: 'context.conversation',
        tools: ['trace_shipment'],
        output: OUTPUT,
        scripted: { keywords: { track: ['where'] } },
        onDone: { target: 'idle', assign: { intent: 'output.intent' } },
        onError: 'idle',
      },
    },
  },
};

/** The machine codegen writes for `spec`, by hand: a structured agent whose answer also carries its messages. */
function triageChat() {
  type Context = { conversation: ConversationMessage[]; intent?: string };
  type Answer = { intent: 'track' | 'other'; messages?: ConversationMessage[] };
  const machine = setup({
    types: {} as { context: Context; events: { type: 'USER_MESSAGE'; text: string }; input: Partial<Context> | undefined },
    actors: { 'llm.agent': fromLlm<Answer>('agent') },
  }).createMachine({
    id: 'triage-chat',
    context: ({ input }) => ({ conversation: [], ...input }),
    initial: 'idle',
    states: {
      idle: {
        on: {
          USER_MESSAGE: {
            target: 'triage',
            actions: assign({ conversation: ({ context, event }) => appendMessage(context.conversation, event.text) }),
          },
        },
      },
      triage: {
        invoke: {
          id: 'triage',
          src: 'llm.agent',
          input: ({ context }) => ({
            kind: 'agent' as const,
            history: context.conversation,
            prompt: '',
            tools: ['trace_shipment'],
            maxIterations: 5,
            output: OUTPUT,
            scripted: { keywords: { track: ['where'] } },
          }),
          onDone: {
            target: 'idle',
            actions: assign({
              conversation: ({ context, event }) => [...context.conversation, ...(event.output.messages ?? [])],
              intent: ({ event }) => event.output.intent,
            }),
          },
          onError: 'idle',
        },
      },
    },
  });
  return defineTestMachine(spec, machine, [traceShipment]);
}

describe('an agent with a history and structured output', () => {
  it('answers with the typed object plus its new messages, and replays to the same context', async () => {
    const machine = triageChat();
    const runtime = createRuntime({ machines: [machine], llm: createScriptedProvider(), clock: createVirtualClock() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'USER_MESSAGE', text: 'where is my parcel?' });
    const { context } = await session.snapshot();
    expect(context).toEqual({
      intent: 'track',
      conversation: [
        { role: 'user', content: 'where is my parcel?' },
        { role: 'assistant', content: '{"intent":"track"}', agent: 'triage-chat.triage' },
      ],
    });
    const completed = (await session.events()).find((e) => e.type === 'llm.completed')!;
    expect(completed.data.output).toMatchObject({ intent: 'track', messages: expect.any(Array) });

    const replayed = await replaySession({ machine, log: await session.events(), clock: createVirtualClock() });
    expect(replayed.snapshot.context).toEqual(context);
  });
});
