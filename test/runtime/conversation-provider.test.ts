import { describe, expect, it } from 'vitest';
import type { ConversationMessage } from '@flowing/spec';
import { createOpenAIProvider } from '../../runtime/llm/openai.ts';
import { createScriptedProvider } from '../../runtime/llm/scripted.ts';
import type { AgentRequest, AgentToolCaller } from '../../runtime/llm/types.ts';
import { reply, toolCalls } from '../helpers/fake-openai.ts';
import { useFakeOpenAI } from '../helpers/use-fake-openai.ts';

const fake = useFakeOpenAI({ pairing: true });

const provider = () => createOpenAIProvider({ baseURL: fake().baseURL, apiKey: 'test-key', model: 'fake-model', timeoutMs: 2_000 });
const live = () => ({ signal: new AbortController().signal });

/** Two turns of a support chat: a question, a tool call with its result, the answer, a follow-up question. */
const history: ConversationMessage[] = [
  { role: 'user', content: 'Where is A1?' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'query_order', args: { order_id: 'A1' } }] },
  { role: 'tool', toolCallId: 'c1', name: 'query_order', content: '{"status":"shipped"}', ok: true },
  { role: 'assistant', content: 'A1 has shipped.' },
  { role: 'user', content: 'And when does it arrive?' },
];

describe('history sent to an OpenAI-compatible model', () => {
  it('sends the history before the call prompt, tool calls paired with their results', async () => {
    fake().enqueue(reply('Tomorrow.'));
    const result = await provider().generate(
      { kind: 'generate', system: 'Be brief.', prompt: 'Answer the last question.', history },
      live(),
    );
    expect(result.output.text).toBe('Tomorrow.');
    const sent = fake().requests[0]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'user']);
    expect(sent[2]!.tool_calls).toEqual([
      { id: 'c1', type: 'function', function: { name: 'query_order', arguments: '{"order_id":"A1"}' } },
    ]);
    expect(sent[3]).toMatchObject({ tool_call_id: 'c1', content: '{"status":"shipped"}' });
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'Answer the last question.' });
  });

  it('sends no user message of its own when the call has none: the history ends with the question', async () => {
    fake().enqueue(reply('{"label":"shipping"}'));
    const result = await provider().classify({ kind: 'classify', text: '', labels: ['shipping', 'other'], history }, live());
    expect(result.output.label).toBe('shipping');
    const sent = fake().requests[0]!.body.messages;
    expect(sent[0]!.role).toBe('system');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'And when does it arrive?' });
  });

  it('sends a summary as a system message in place of the messages it covers', async () => {
    fake().enqueue(reply('Noted.'));
    const summarised: ConversationMessage[] = [
      ...history.slice(0, 4),
      { role: 'summary', content: 'The customer asked about A1, which shipped.', facts: { orderId: 'A1' }, covers: 4 },
      history[4]!,
    ];
    await provider().generate({ kind: 'generate', prompt: '', history: summarised }, live());
    const sent = fake().requests[0]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent[0]!.content).toContain('The customer asked about A1, which shipped.');
    expect(sent[0]!.content).toContain('"orderId":"A1"');
  });

  it('answers a tool call whose result is missing from the history as interrupted, and drops a result without its call', async () => {
    fake().enqueue(reply('Sorry, let me try again.'));
    const broken: ConversationMessage[] = [
      { role: 'user', content: 'Where is A1?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'query_order', args: { order_id: 'A1' } }] },
      { role: 'tool', toolCallId: 'c9', name: 'query_order', content: '{}', ok: true },
      { role: 'user', content: 'Hello?' },
    ];
    await provider().generate({ kind: 'generate', prompt: '', history: broken }, live());
    const sent = fake().requests[0]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(JSON.parse(sent[2]!.content as string).error.code).toBe('INTERRUPTED');
  });
});

describe('messages an agent call returns for its conversation', () => {
  const request: AgentRequest = { kind: 'agent', prompt: '', tools: ['query_order'], maxIterations: 4, history };

  it('returns each assistant turn with its tool calls, each result in the model order (a failure too), and the answer', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'c2', name: 'query_order', arguments: '{"order_id":"A1"}' },
        { id: 'c3', name: 'query_order', arguments: '{"order_id":"B2"}' },
      ]),
      reply('A1 arrives tomorrow; B2 is unknown.'),
    );
    const callTool: AgentToolCaller = async (_name, args) =>
      (args as { order_id: string }).order_id === 'A1'
        ? { ok: true, output: { eta: 'tomorrow' } }
        : { ok: false, error: { code: 'ORDER_NOT_FOUND', message: 'no order B2' } };
    const result = await provider().agent(request, { ...live(), callTool });
    expect(result.output.messages).toEqual([
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c2', name: 'query_order', args: { order_id: 'A1' } },
          { id: 'c3', name: 'query_order', args: { order_id: 'B2' } },
        ],
      },
      { role: 'tool', toolCallId: 'c2', name: 'query_order', content: '{"eta":"tomorrow"}', ok: true },
      {
        role: 'tool',
        toolCallId: 'c3',
        name: 'query_order',
        content: '{"error":{"code":"ORDER_NOT_FOUND","message":"no order B2"}}',
        ok: false,
      },
      { role: 'assistant', content: 'A1 arrives tomorrow; B2 is unknown.' },
    ]);
    // The first request carried the history and no prompt of its own; the second, the new turn after it.
    expect(fake().requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'And when does it arrive?' });
    expect(
      fake()
        .requests[1]!.body.messages.slice(-3)
        .map((m) => m.role),
    ).toEqual(['assistant', 'tool', 'tool']);
  });

  it('starts its messages with the prompt as a user message when the call has one', async () => {
    fake().enqueue(reply('Done.'));
    const result = await provider().agent(
      { ...request, prompt: 'Summarise the order.' },
      { ...live(), callTool: async () => ({ ok: true, output: {} }) },
    );
    expect(result.output.messages).toEqual([
      { role: 'user', content: 'Summarise the order.' },
      { role: 'assistant', content: 'Done.' },
    ]);
  });

  it('hands off with the conversation: the transfer call and its result close the pair, the last user message goes along', async () => {
    fake().enqueue(toolCalls([{ id: 'h1', name: 'transfer_to_billing', arguments: '{"reason":"a refund"}' }]));
    const result = await provider().agent(
      { ...request, handoffs: ['billing'] },
      { ...live(), callTool: async () => ({ ok: true, output: {} }) },
    );
    expect(result.output.handoff).toEqual({ to: 'billing', reason: 'a refund', message: 'And when does it arrive?' });
    expect(result.output.messages).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'h1', name: 'transfer_to_billing', args: { reason: 'a refund' } }] },
      { role: 'tool', toolCallId: 'h1', name: 'transfer_to_billing', content: '{"handoff":"billing"}', ok: true },
    ]);
  });

  it('returns no messages when the call has no history', async () => {
    fake().enqueue(reply('Done.'));
    const { history: _none, ...plain } = request;
    const result = await provider().agent({ ...plain, prompt: 'Hi' }, { ...live(), callTool: async () => ({ ok: true, output: {} }) });
    expect(result.output).toEqual({ text: 'Done.', steps: 1 });
  });
});

describe('the scripted provider with a history', () => {
  const scripted = createScriptedProvider();

  it('reads the last user message when the call has no text of its own', async () => {
    const classified = await scripted.classify({ kind: 'classify', text: '', labels: ['arrive', 'other'], history }, live());
    expect(classified.output.label).toBe('arrive');
    const extracted = await scripted.extract(
      { kind: 'extract', text: '', fields: { word: { type: 'string' } }, scripted: { patterns: { word: 'when (\\w+)' } }, history },
      live(),
    );
    expect(extracted.output).toEqual({ word: 'does' });
  });

  it('hands off by keyword on the last user message, with the transfer pair in its new messages', async () => {
    const result = await scripted.agent(
      {
        kind: 'agent',
        prompt: '',
        tools: [],
        maxIterations: 1,
        history,
        handoffs: ['shipping'],
        scripted: { handoffs: { shipping: ['arrive'] } },
      },
      live(),
    );
    expect(result.output.handoff).toMatchObject({ to: 'shipping', message: 'And when does it arrive?' });
    expect(result.output.messages?.map((m) => m.role)).toEqual(['assistant', 'tool']);
    expect(result.output.messages?.[0]).toMatchObject({ toolCalls: [{ name: 'transfer_to_shipping' }] });
  });

  it('answers an agent call with the last user message and returns it as the new assistant message', async () => {
    const result = await scripted.agent({ kind: 'agent', prompt: '', tools: [], maxIterations: 1, history }, live());
    expect(result.output).toEqual({
      text: 'And when does it arrive?',
      steps: 1,
      messages: [{ role: 'assistant', content: 'And when does it arrive?' }],
    });
  });
});
