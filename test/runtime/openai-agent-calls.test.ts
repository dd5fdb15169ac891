import { describe, expect, it } from 'vitest';
import type { FlowingError } from '../../runtime/errors.ts';
import { createOpenAIProvider } from '../../runtime/llm/openai.ts';
import type { AgentRequest, AgentToolCaller, LlmCallOptions } from '../../runtime/llm/types.ts';
import { reply, streamed, toolCalls } from '../helpers/fake-openai.ts';
import { useFakeOpenAI } from '../helpers/use-fake-openai.ts';

const fake = useFakeOpenAI({ pairing: true });

const provider = () => createOpenAIProvider({ baseURL: fake().baseURL, apiKey: 'test-key', model: 'fake-agent', timeoutMs: 2_000 });
const live = () => ({ signal: new AbortController().signal });
const request: AgentRequest = { kind: 'agent', prompt: 'Where are A1 and B2?', tools: ['query_order'], maxIterations: 4 };
const toolSchemas: LlmCallOptions['toolSchemas'] = {
  query_order: {
    description: 'Looks up an order',
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string' }, customer_id: { type: 'string' } },
      required: ['order_id', 'customer_id'],
    },
  },
};

describe('parallel tool calls', () => {
  it('runs the calls of one turn together and answers them in the model order, a failure included', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'c_slow', name: 'query_order', arguments: '{"order_id":"A1"}' },
        { id: 'c_fail', name: 'query_order', arguments: '{"order_id":"B2"}' },
        { id: 'c_fast', name: 'query_order', arguments: '{"order_id":"C3"}' },
      ]),
      reply('A1 shipped, C3 processing, B2 unknown.'),
    );
    const started: string[] = [];
    let releaseSlow!: () => void;
    const slowGate = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const callTool: AgentToolCaller = async (_name, args) => {
      const id = (args as { order_id: string }).order_id;
      started.push(id);
      if (id === 'A1') await slowGate; // still running while the others start and finish
      if (id === 'B2') return { ok: false, error: { code: 'ORDER_NOT_FOUND', message: 'no order B2' } };
      if (id === 'C3') releaseSlow();
      return { ok: true, output: { order_id: id } };
    };
    const result = await provider().agent(request, { ...live(), callTool, toolSchemas });
    expect(result.output.text).toBe('A1 shipped, C3 processing, B2 unknown.');
    // All three started before the first (the slow one) could finish: C3 is what lets it finish.
    expect(started).toEqual(['A1', 'B2', 'C3']);
    const tools = fake().requests[1]!.body.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.tool_call_id)).toEqual(['c_slow', 'c_fail', 'c_fast']);
    expect(JSON.parse(tools[1]!.content as string)).toEqual({ error: { code: 'ORDER_NOT_FOUND', message: 'no order B2' } });
  });
});

describe('streamed agent replies', () => {
  it('streams the final answer and the text of tool turns through onDelta', async () => {
    fake().enqueue(
      { type: 'reply', chunks: ['Let me check. '], toolCalls: [{ id: 'c1', name: 'query_order', arguments: '{"order_id":"A1"}' }] },
      streamed(['A1 ', 'has ', 'shipped.']),
    );
    const deltas: string[] = [];
    const callTool: AgentToolCaller = async () => ({ ok: true, output: { status: 'shipped' } });
    const result = await provider().agent(request, { ...live(), callTool, toolSchemas, onDelta: (d) => deltas.push(d) });
    expect(deltas).toEqual(['Let me check. ', 'A1 ', 'has ', 'shipped.']);
    expect(result.output).toEqual({ text: 'A1 has shipped.', steps: 2 });
    expect(fake().requests.every((r) => r.body.stream === true)).toBe(true);
    // The streamed tool call was put together and answered.
    expect(fake().requests[1]!.body.messages.find((m) => m.role === 'tool')?.tool_call_id).toBe('c1');
  });
});

describe('structured output', () => {
  const structured: AgentRequest = {
    ...request,
    tools: [],
    output: {
      intent: { type: 'enum', values: ['order_query', 'refund', 'other'] },
      orderIds: { type: 'array', items: { type: 'string' } },
      customer: { type: 'object', optional: true, fields: { name: { type: 'string' } } },
    },
  };

  it('asks for a JSON Schema answer and returns it as an object', async () => {
    fake().enqueue(reply('{"intent":"order_query","orderIds":["A1","B2"]}'));
    const result = await provider().agent(structured, live());
    expect(result.output.output).toEqual({ intent: 'order_query', orderIds: ['A1', 'B2'] });
    const format = fake().requests[0]!.body.response_format as { type: string; json_schema: { schema: { properties: object } } };
    expect(format.type).toBe('json_schema');
    expect(Object.keys(format.json_schema.schema.properties)).toEqual(['intent', 'orderIds', 'customer']);
  });

  it('feeds an answer that does not match back, without using up an iteration', async () => {
    fake().enqueue(reply('{"intent":"shopping","orderIds":[]}'), reply('```json\n{"intent":"other","orderIds":[]}\n```'));
    const result = await provider().agent({ ...structured, maxIterations: 1 }, live());
    expect(result.output.output).toEqual({ intent: 'other', orderIds: [] });
    expect(result.attempts).toBe(2);
    expect(fake().requests[1]!.body.messages.at(-1)?.content).toContain('intent');
  });

  it('gives up with LLM_BAD_OUTPUT after 2 repairs', async () => {
    fake().enqueue(reply('no'), reply('still no'), reply('{"intent":1}'));
    const error = await provider()
      .agent(structured, live())
      .then(
        () => undefined,
        (e: unknown) => e as FlowingError,
      );
    expect(error?.code).toBe('LLM_BAD_OUTPUT');
    expect(fake().requests).toHaveLength(3);
  });
});

describe('bound tool arguments', () => {
  it('leaves bound arguments out of the schema the model sees', async () => {
    fake().enqueue(reply('done'));
    await provider().agent(
      { ...request, bound: { query_order: { customer_id: 'cust-7' } } },
      { ...live(), callTool: async () => ({ ok: true, output: {} }), toolSchemas },
    );
    const tool = (fake().requests[0]!.body.tools as Array<{ function: { parameters: { properties: object; required: string[] } } }>)[0]!;
    expect(Object.keys(tool.function.parameters.properties)).toEqual(['order_id']);
    expect(tool.function.parameters.required).toEqual(['order_id']);
  });
});

describe('handoffs', () => {
  it('a handoff in a turn with other tool calls ends the loop at once: the other calls do not run', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'c1', name: 'query_order', arguments: '{"order_id":"A1"}' },
        { id: 'h1', name: 'transfer_to_billing', arguments: '{"reason":"an invoice question"}' },
      ]),
    );
    const ran: unknown[] = [];
    const callTool: AgentToolCaller = async (_name, args) => {
      ran.push(args);
      return { ok: true, output: {} };
    };
    const steps: unknown[] = [];
    const result = await provider().agent(
      { ...request, handoffs: ['billing', 'refunds'], maxIterations: 1 },
      { ...live(), callTool, toolSchemas, onStep: (s) => steps.push(s) },
    );
    expect(result.output).toEqual({
      text: '',
      steps: 1,
      handoff: { to: 'billing', reason: 'an invoice question', message: 'Where are A1 and B2?' },
    });
    expect(ran).toEqual([]);
    expect(steps).toHaveLength(1);
    expect(fake().requests).toHaveLength(1);
  });
});

describe('proposals a person decides', () => {
  it('stops after the turn with a proposal and goes on from its transcript: no model request is made again, the conversation keeps its pairs', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'c1', name: 'query_order', arguments: '{"order_id":"A1"}' },
        { id: 'p1', name: 'refund', arguments: '{"order_id":"A1"}' },
      ]),
    );
    const callTool: AgentToolCaller = async () => ({ ok: true, output: { status: 'shipped' } });
    const proposing: AgentRequest = {
      ...request,
      tools: ['query_order', 'refund'],
      history: [{ role: 'user', content: 'Refund A1 please' }],
    };
    const needsApproval = (name: string) => name === 'refund';
    const first = await provider().agent(proposing, { ...live(), callTool, toolSchemas, needsApproval });
    const suspended = first.output.suspended!;
    expect(suspended.pending).toEqual([{ id: 'p1', name: 'refund', args: { order_id: 'A1' } }]);
    expect(Object.keys(suspended.answers)).toEqual(['c1']);

    fake().enqueue(reply('Refunded A1.'));
    const answers = { ...suspended.answers, p1: JSON.stringify({ refunded: true }) };
    const second = await provider().agent(proposing, {
      ...live(),
      callTool,
      toolSchemas,
      needsApproval,
      resume: {
        iteration: suspended.iteration,
        messages: suspended.messages,
        answers,
        ...(suspended.conversation ? { conversation: suspended.conversation } : {}),
      },
    });
    expect(second.output.text).toBe('Refunded A1.');
    expect(fake().requests).toHaveLength(2);
    const sent = fake().requests[1]!.body.messages;
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['c1', 'p1']);
    expect(second.output.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
  });
});
