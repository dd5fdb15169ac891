import OpenAI, { BadRequestError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FlowingError } from '../../runtime/errors.ts';
import { createOpenAIProvider } from '../../runtime/llm/openai.ts';
import type { AgentRequest, AgentToolCaller, LlmCallOptions } from '../../runtime/llm/types.ts';
import { reply, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../helpers/fake-openai.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  expect(fake.pending()).toBe(0);
  // The fake answers a request that breaks tool-call pairing with a 400; no test may cause one.
  expect(fake.requests.filter((r) => r.pairingError)).toEqual([]);
  fake.requests.length = 0;
});

const provider = () =>
  createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'test-key', models: { agent: 'fake-agent' }, timeoutMs: 2_000 });
const request: AgentRequest = {
  kind: 'agent',
  prompt: 'Where is order A1001?',
  system: 'You help customers.',
  tools: ['query_order', 'query_logistics'],
  maxIterations: 4,
};
const toolSchemas: LlmCallOptions['toolSchemas'] = {
  query_order: {
    description: 'Looks up an order',
    parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  },
  query_logistics: { description: 'Tracks a parcel', parameters: { type: 'object', properties: { tracking: { type: 'string' } } } },
};

/** A tool runner that records its calls and answers query_order with a shipped order. */
function recordingTools() {
  const calls: Array<{ name: string; args: unknown }> = [];
  const callTool: AgentToolCaller = async (name, args) => {
    calls.push({ name, args });
    return { ok: true, output: { order_id: (args as { order_id?: string }).order_id, status: 'shipped' } };
  };
  return { calls, callTool };
}

function toolMessages(requestIndex: number) {
  return fake.requests[requestIndex]!.body.messages.filter((m) => m.role === 'tool');
}

describe('agent loop', () => {
  it('runs a tool call, answers it with a paired tool message and returns the final text', async () => {
    fake.enqueue(
      toolCalls([{ id: 'call_a', name: 'query_order', arguments: '{"order_id":"A1001"}' }], { usage: { prompt: 50, completion: 10 } }),
      reply('Order A1001 has shipped.', { usage: { prompt: 80, completion: 8 } }),
    );
    const { calls, callTool } = recordingTools();
    const steps: unknown[] = [];
    const result = await provider().agent(request, {
      signal: new AbortController().signal,
      callTool,
      toolSchemas,
      onStep: (s) => steps.push(s),
    });

    expect(result).toEqual({
      output: { text: 'Order A1001 has shipped.', steps: 2 },
      model: 'fake-agent',
      usage: { promptTokens: 130, completionTokens: 18 },
      attempts: 2,
      // The last answer's reason: the model stopped after the tool call's result.
      finishReason: 'stop',
    });
    expect(calls).toEqual([{ name: 'query_order', args: { order_id: 'A1001' } }]);
    expect(steps).toEqual([
      { iteration: 1, toolCalls: [{ id: 'call_a', name: 'query_order', args: { order_id: 'A1001' } }] },
      { iteration: 2, toolCalls: [], text: 'Order A1001 has shipped.' },
    ]);
    const first = fake.requests[0]!.body;
    expect(first.tools).toEqual([
      { type: 'function', function: { name: 'query_order', ...toolSchemas.query_order } },
      { type: 'function', function: { name: 'query_logistics', ...toolSchemas.query_logistics } },
    ]);
    expect(toolMessages(1)).toEqual([{ role: 'tool', tool_call_id: 'call_a', content: '{"order_id":"A1001","status":"shipped"}' }]);
  });

  it('repairs malformed arguments it can read and reports unreadable ones back to the model', async () => {
    fake.enqueue(
      toolCalls([
        { id: 'call_fixable', name: 'query_order', arguments: "```json\n{'order_id': 'A1001',}\n```" },
        { id: 'call_broken', name: 'query_order', arguments: '{"order_id": "A10' },
      ]),
      reply('Done.'),
    );
    const { calls, callTool } = recordingTools();
    const result = await provider().agent(request, { signal: new AbortController().signal, callTool, toolSchemas });

    expect(result.output.text).toBe('Done.');
    expect(calls).toEqual([{ name: 'query_order', args: { order_id: 'A1001' } }]);
    const [fixed, broken] = toolMessages(1);
    expect(fixed).toMatchObject({ tool_call_id: 'call_fixable', content: '{"order_id":"A1001","status":"shipped"}' });
    expect(broken!.tool_call_id).toBe('call_broken');
    const error = JSON.parse(String(broken!.content)) as { error: { code: string; message: string } };
    expect(error.error.code).toBe('BAD_ARGUMENTS');
    expect(error.error.message).toContain('not valid JSON');
    expect(error.error.message).not.toMatch(/\n\s+at /);
  });

  it('answers a call to an unknown tool with tool-error text and never runs it', async () => {
    fake.enqueue(toolCalls([{ id: 'call_x', name: 'delete_everything', arguments: '{}' }]), reply('Sorry, I cannot do that.'));
    const { calls, callTool } = recordingTools();
    const result = await provider().agent(request, { signal: new AbortController().signal, callTool, toolSchemas });

    expect(result.output.text).toBe('Sorry, I cannot do that.');
    expect(calls).toEqual([]);
    const [answer] = toolMessages(1);
    expect(answer!.tool_call_id).toBe('call_x');
    expect(JSON.parse(String(answer!.content))).toEqual({
      error: { code: 'TOOL_UNKNOWN', message: "there is no tool named 'delete_everything'; the tools are: query_order, query_logistics" },
    });
  });

  it('refuses 1 MB of arguments without parsing or running the tool', async () => {
    const huge = JSON.stringify({ order_id: 'x'.repeat(1_000_000) });
    fake.enqueue(toolCalls([{ id: 'call_big', name: 'query_order', arguments: huge }]), reply('Giving up on that.'));
    const { calls, callTool } = recordingTools();
    await provider().agent(request, { signal: new AbortController().signal, callTool, toolSchemas });
    expect(calls).toEqual([]);
    expect(JSON.parse(String(toolMessages(1)[0]!.content))).toMatchObject({ error: { code: 'BAD_ARGUMENTS' } });
  });

  it('hands a failed tool call back to the model as its error code and message', async () => {
    fake.enqueue(toolCalls([{ id: 'call_nf', name: 'query_order', arguments: '{"order_id":"Z9"}' }]), reply('That order does not exist.'));
    const callTool: AgentToolCaller = async () => ({ ok: false, error: { code: 'ORDER_NOT_FOUND', message: 'no order Z9' } });
    await provider().agent(request, { signal: new AbortController().signal, callTool, toolSchemas });
    expect(toolMessages(1)[0]!.content).toBe('{"error":{"code":"ORDER_NOT_FOUND","message":"no order Z9"}}');
  });

  it('stops a model that calls tools forever at maxIterations with LLM_BAD_OUTPUT', async () => {
    const forever = (n: number) => toolCalls([{ id: `call_${n}`, name: 'query_order', arguments: '{"order_id":"A1001"}' }]);
    fake.enqueue(forever(1), forever(2), forever(3));
    const { calls, callTool } = recordingTools();
    const steps: number[] = [];
    const error = await provider()
      .agent(
        { ...request, maxIterations: 3 },
        { signal: new AbortController().signal, callTool, toolSchemas, onStep: (s) => steps.push(s.iteration) },
      )
      .then(
        () => undefined,
        (e: unknown) => e as FlowingError,
      );

    expect(error).toBeInstanceOf(FlowingError);
    expect(error!.code).toBe('LLM_BAD_OUTPUT');
    expect(error!.details).toMatchObject({ maxIterations: 3, attempts: 3 });
    expect(fake.requests).toHaveLength(3);
    expect(steps).toEqual([1, 2, 3]);
    // The calls of the last iteration are not run: nothing would read their results.
    expect(calls).toHaveLength(2);
    expect(toolMessages(2).map((m) => m.tool_call_id)).toEqual(['call_1', 'call_2']);
  });

  it('stops with CANCELLED when the signal fires while a tool runs, sending no further request', async () => {
    fake.enqueue(toolCalls([{ id: 'call_a', name: 'query_order', arguments: '{"order_id":"A1001"}' }]));
    const controller = new AbortController();
    const callTool: AgentToolCaller = async () => {
      controller.abort(new Error('session cancelled'));
      return { ok: true, output: {} };
    };
    const error = await provider()
      .agent(request, { signal: controller.signal, callTool, toolSchemas })
      .then(
        () => undefined,
        (e: unknown) => e as FlowingError,
      );
    expect(error?.code).toBe('CANCELLED');
    expect(fake.requests).toHaveLength(1);
  });

  it('synthesises ids for tool calls sent without one, so every call is still paired', async () => {
    fake.enqueue(toolCalls([{ id: '', name: 'query_order', arguments: '{"order_id":"A1001"}' }]), reply('ok'));
    const { callTool } = recordingTools();
    await provider().agent(request, { signal: new AbortController().signal, callTool, toolSchemas });
    const assistant = fake.requests[1]!.body.messages.find((m) => m.role === 'assistant')!;
    expect(assistant.tool_calls![0]!.id).toBe('call_1_0');
    expect(toolMessages(1)[0]!.tool_call_id).toBe('call_1_0');
  });
});

describe('the fake server', () => {
  it('answers a request with an unanswered tool call with a 400', async () => {
    const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'k', maxRetries: 0 });
    const sent = client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'query_order', arguments: '{}' } }],
        },
        { role: 'user', content: 'well?' },
      ],
    });
    await expect(sent).rejects.toBeInstanceOf(BadRequestError);
    expect(fake.requests[0]!.pairingError).toContain('call_1');
    fake.requests.length = 0;
  });
});
