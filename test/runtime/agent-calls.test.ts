import { setup, assign } from 'xstate';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  createRuntime,
  createScriptedProvider,
  defineTool,
  fromLlm,
  ToolError,
  type FlowError,
  type LlmProvider,
  type RuntimeEvent,
  type RuntimeLimits,
} from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import type { FieldMap, FlowSpecInput } from '@flowing/spec';
import { httpError, reply, streamed, toolCalls } from '../helpers/fake-openai.ts';
import { useFakeOpenAI } from '../helpers/use-fake-openai.ts';
import { defineTestMachine } from '../helpers/runtime-machines.ts';

const fake = useFakeOpenAI({ pairing: true });

const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);
const openai = () =>
  createOpenAIProvider({ baseURL: fake().baseURL, apiKey: 'test-key', model: 'fake-agent', timeoutMs: 2_000, retryBaseMs: 10 });

/** fetch_trip: looks a trip up for a customer; `B2` is not found; tracks how many run at once; logs its progress. */
function tripTool() {
  const ran: Array<{ trip_id: string; customer_id: string }> = [];
  const live = { now: 0, max: 0 };
  const tool = defineTool({
    name: 'fetch_trip',
    description: 'Looks up a trip of a customer',
    idempotent: true,
    input: z.object({ trip_id: z.string(), customer_id: z.string() }),
    output: z.object({ trip_id: z.string(), customer_id: z.string() }),
    async run(input, { log }) {
      ran.push(input);
      live.now += 1;
      live.max = Math.max(live.max, live.now);
      try {
        log(`looking up ${input.trip_id}`);
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (input.trip_id === 'B2') throw new ToolError('TRIP_NOT_FOUND', `no trip ${input.trip_id}`);
        return input;
      } finally {
        live.now -= 1;
      }
    },
  });
  return { tool, ran, live };
}

/**
 * idle --ASK{text}--> helping: an agent over fetch_trip with customer_id bound to context.customerId, at most 3
 * iterations; its answer (text, or the structured object) lands in `answer`/`result`, a failure's code in `error`.
 */
function tripAgent(tool: ReturnType<typeof tripTool>['tool'], output?: FieldMap, scripted?: { patterns?: Record<string, string> }) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'trip-agent',
    context: {
      customerId: { type: 'string', default: 'IR-D204' },
      text: { type: 'string', optional: true },
      answer: { type: 'string', optional: true },
      result: { type: 'unknown', optional: true },
      error: { type: 'string', optional: true },
    },
    events: { ASK: { text: { type: 'string' } } },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: 'helping', assign: { text: 'event.text' } } } },
      helping: {
        invoke: {
          llm: 'agent',
          prompt: '{{ context.text }}',
          tools: [{ tool: 'fetch_trip', bind: { customer_id: 'context.customerId' } }],
          maxIterations: 3,
          ...(output ? { output } : {}),
          ...(scripted ? { scripted } : {}),
          onDone: { target: 'idle' },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ctx = { customerId: string; text?: string; answer?: string; result?: unknown; error?: string };
  const machine = setup({
    types: {} as { context: Ctx; events: { type: 'ASK'; text: string } },
    actors: { 'llm.agent': fromLlm('agent') },
  }).createMachine({
    id: 'trip-agent',
    context: { customerId: 'IR-D204' },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: '#trip-agent.helping', actions: assign({ text: ({ event }) => event.text }) } } },
      helping: {
        invoke: {
          id: 'helping',
          src: 'llm.agent',
          input: ({ context }) => ({
            kind: 'agent' as const,
            prompt: context.text ?? '',
            tools: ['fetch_trip'],
            bound: { fetch_trip: { customer_id: context.customerId } },
            maxIterations: 3,
            ...(output ? { output } : {}),
            ...(scripted ? { scripted } : {}),
          }),
          onDone: {
            target: '#trip-agent.idle',
            actions: assign(({ event }) =>
              output ? { result: event.output as unknown } : { answer: (event.output as { text: string }).text },
            ),
          },
          onError: { target: '#trip-agent.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineTestMachine(spec, machine, [tool]);
}

async function ask(
  llm: LlmProvider,
  text: string,
  options: { output?: FieldMap; limits?: RuntimeLimits; scripted?: { patterns?: Record<string, string> } } = {},
) {
  const trip = tripTool();
  const machine = tripAgent(trip.tool, options.output, options.scripted);
  const runtime = createRuntime({ machines: [machine], llm, ...(options.limits ? { limits: options.limits } : {}) });
  const session = await runtime.createSession(machine);
  await session.send({ type: 'ASK', text });
  return { ...trip, session, events: await session.events(), context: (await session.snapshot()).context as Record<string, unknown> };
}

describe('context-bound tool arguments', () => {
  it('runs the tool with the bound value when the model sends another, and logs the attempt', async () => {
    fake().enqueue(
      toolCalls([{ id: 'c1', name: 'fetch_trip', arguments: '{"trip_id":"T1","customer_id":"LL0EZ6"}' }]),
      reply('Your trip T1 is booked.'),
    );
    const { ran, events, context } = await ask(openai(), 'my trip T1');
    expect(ran).toEqual([{ trip_id: 'T1', customer_id: 'IR-D204' }]);
    expect(ofType(events, 'tool.bind_overridden')).toEqual([
      { callId: 'helping@2/1', tool: 'fetch_trip', fields: ['customer_id'], sent: { customer_id: 'LL0EZ6' } },
    ]);
    expect(ofType(events, 'tool.started')[0]).toMatchObject({ args: { trip_id: 'T1', customer_id: 'IR-D204' } });
    expect(context.answer).toBe('Your trip T1 is booked.');
    // The model was never asked for the bound argument.
    const offered = (fake().requests[0]!.body.tools as Array<{ function: { parameters: { properties: object } } }>)[0]!;
    expect(Object.keys(offered.function.parameters.properties)).toEqual(['trip_id']);
  });

  it('logs nothing when the model leaves the bound argument out', async () => {
    fake().enqueue(toolCalls([{ id: 'c1', name: 'fetch_trip', arguments: '{"trip_id":"T1"}' }]), reply('ok'));
    const { ran, events } = await ask(openai(), 'my trip T1');
    expect(ran).toEqual([{ trip_id: 'T1', customer_id: 'IR-D204' }]);
    expect(ofType(events, 'tool.bind_overridden')).toEqual([]);
  });
});

describe('parallel tool calls in the runtime', () => {
  it('runs one turn’s calls at once within the concurrency limit, journals each, and answers in the model order', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'a', name: 'fetch_trip', arguments: '{"trip_id":"A1"}' },
        { id: 'b', name: 'fetch_trip', arguments: '{"trip_id":"B2"}' },
        { id: 'c', name: 'fetch_trip', arguments: '{"trip_id":"C3"}' },
        { id: 'd', name: 'fetch_trip', arguments: '{"trip_id":"D4"}' },
      ]),
      reply('A1, C3 and D4 found; B2 not.'),
    );
    // The agent holds one of the 3 slots and lends it to its tools while it waits: at most 3 tools run at once.
    const { live, events, context } = await ask(openai(), 'trips A1 B2 C3 D4', { limits: { maxConcurrentCalls: 3 } });
    expect(live.max).toBe(3);
    expect(ofType(events, 'tool.started').map((e) => e.callId)).toHaveLength(4);
    expect(new Set(ofType(events, 'tool.started').map((e) => e.callId))).toEqual(
      new Set(['helping@2/1', 'helping@2/2', 'helping@2/3', 'helping@2/4']),
    );
    expect(ofType(events, 'tool.failed')).toMatchObject([{ callId: 'helping@2/2', error: { code: 'TRIP_NOT_FOUND' } }]);
    const answers = fake().requests[1]!.body.messages.filter((m) => m.role === 'tool');
    expect(answers.map((m) => m.tool_call_id)).toEqual(['a', 'b', 'c', 'd']);
    expect(JSON.parse(answers[1]!.content as string)).toMatchObject({ error: { code: 'TRIP_NOT_FOUND' } });
    expect(context.answer).toBe('A1, C3 and D4 found; B2 not.');
  });

  it('runs the tools one by one on the agent’s slot when the runtime allows one call at a time', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'a', name: 'fetch_trip', arguments: '{"trip_id":"A1"}' },
        { id: 'b', name: 'fetch_trip', arguments: '{"trip_id":"C3"}' },
      ]),
      reply('A1 and C3 found.'),
    );
    const { live, events, context } = await ask(openai(), 'trips A1 C3', { limits: { maxConcurrentCalls: 1 } });
    expect(live.max).toBe(1);
    expect(ofType(events, 'tool.completed').map((e) => e.callId)).toEqual(['helping@2/1', 'helping@2/2']);
    expect(context.answer).toBe('A1 and C3 found.');
  });

  it('sends tool log lines as tool.progress events', async () => {
    fake().enqueue(toolCalls([{ id: 'a', name: 'fetch_trip', arguments: '{"trip_id":"A1"}' }]), reply('ok'));
    const { events } = await ask(openai(), 'trip A1');
    expect(ofType(events, 'tool.progress')).toEqual([{ callId: 'helping@2/1', tool: 'fetch_trip', message: 'looking up A1' }]);
    const order = events.map((e) => e.type);
    expect(order.indexOf('tool.progress')).toBeGreaterThan(order.indexOf('tool.started'));
    expect(order.indexOf('tool.progress')).toBeLessThan(order.indexOf('tool.completed'));
  });
});

describe('streamed agent replies, retries and the budget', () => {
  it('logs the agent answer as message.delta events and a message.complete', async () => {
    fake().enqueue(streamed(['Your ', 'trip ', 'is fine.']));
    const { events, context } = await ask(openai(), 'how is my trip');
    expect(ofType(events, 'message.delta').map((e) => e.text)).toEqual(['Your ', 'trip ', 'is fine.']);
    expect(ofType(events, 'message.complete')).toEqual([{ callId: 'helping@2', text: 'Your trip is fine.' }]);
    expect(context.answer).toBe('Your trip is fine.');
  });

  it('logs each retry of a model request as llm.retry', async () => {
    fake().enqueue(httpError(503, 'overloaded'), reply('fine'));
    const { events, context } = await ask(openai(), 'hello');
    expect(ofType(events, 'llm.retry')).toEqual([
      {
        callId: 'helping@2',
        kind: 'agent',
        attempt: 2,
        delayMs: expect.any(Number),
        error: { code: 'LLM_FAILED', message: expect.stringContaining('503') },
      },
    ]);
    expect(ofType(events, 'llm.completed')[0]).toMatchObject({ attempts: 2 });
    expect(context.answer).toBe('fine');
  });

  it('stops a streaming answer once it passes the token budget, with BUDGET_EXCEEDED', async () => {
    const chunks = Array.from({ length: 200 }, (_, i) => `word${i} `);
    fake().enqueue(streamed(chunks, { intervalMs: 2 }));
    const { events, context } = await ask(openai(), 'write a lot', { limits: { tokenBudget: 40 } });
    expect(context.error).toBe('BUDGET_EXCEEDED');
    expect(ofType(events, 'llm.failed')).toMatchObject([{ error: { code: 'BUDGET_EXCEEDED' } }]);
    const deltas = ofType(events, 'message.delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.length).toBeLessThan(30);
    expect(fake().requests).toHaveLength(1);
    await vi.waitFor(() => expect(fake().requests[0]!.clientClosed).toBe(true));
  });
});

describe('structured output in the runtime', () => {
  const output: FieldMap = {
    intent: { type: 'enum', values: ['order_query', 'refund', 'other'] },
    orderIds: { type: 'array', items: { type: 'string' } },
    urgent: { type: 'boolean' },
    customer: { type: 'object', fields: { name: { type: 'string' }, tier: { type: 'enum', values: ['standard', 'gold'] } } },
    note: { type: 'string', optional: true },
  };

  it('the scripted model fills every field type offline: arrays, enums, nested objects, defaults', async () => {
    const { context, events } = await ask(createScriptedProvider(), 'Refund for A1001 and B2002 please, I am Ann (gold)', {
      output,
      scripted: { patterns: { orderIds: '\\b([A-Z][0-9]{4})\\b', 'customer.name': 'I am (\\w+)' } },
    });
    expect(context.error).toBeUndefined();
    expect(context.result).toEqual({
      intent: 'refund',
      orderIds: ['A1001', 'B2002'],
      urgent: false,
      customer: { name: 'Ann', tier: 'gold' },
    });
    expect(ofType(events, 'message.delta')).toEqual([]);
  });

  it('with a real model, hands the checked object to onDone', async () => {
    fake().enqueue(reply('{"intent":"order_query","orderIds":["A1"],"urgent":true,"customer":{"name":"Bo","tier":"standard"}}'));
    const { context } = await ask(openai(), 'where is A1', { output });
    expect(context.result).toEqual({ intent: 'order_query', orderIds: ['A1'], urgent: true, customer: { name: 'Bo', tier: 'standard' } });
  });
});
