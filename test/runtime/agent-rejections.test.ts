import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, createVirtualClock, replaySession, type RuntimeEvent } from '@flowing/runtime';
import { sessionAt } from '@flowing/protocol';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { payAgent, payTools } from '../helpers/agent-approvals.ts';
import { reply, toolCalls } from '../helpers/fake-openai.ts';
import { useFakeOpenAI } from '../helpers/use-fake-openai.ts';

const fake = useFakeOpenAI({ pairing: true });

const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);
const openai = () => createOpenAIProvider({ baseURL: fake().baseURL, apiKey: 'test-key', model: 'fake-agent', timeoutMs: 2_000 });

/** The tool message the model was sent for call `id` in request `n`, parsed. */
function toolAnswer(n: number, id: string): { error?: { code: string; message: string } } {
  const message = fake().requests[n]!.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === id);
  expect(message, `request ${n} answers ${id}`).toBeDefined();
  return JSON.parse(message!.content as string);
}

describe("a person's reason for rejecting a call the model proposed", () => {
  it('reaches the model in the tool result, is stored with the decision and logged in approval.decided', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":500}' }]), reply('I will not pay that.'));
    const t = payTools();
    const machine = payAgent(t);
    const runtime = createRuntime({ machines: [machine], llm: openai(), store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay me 500' });
    expect(await session.send({ type: 'REJECT', reason: 'over the refund limit of 100' })).toMatchObject({ applied: true, state: 'idle' });

    expect(t.paid).toEqual([]);
    expect(toolAnswer(1, 'p1')).toEqual({
      error: { code: 'APPROVAL_REJECTED', message: "'pay' was rejected by a person: over the refund limit of 100" },
    });
    expect((await session.snapshot()).approval).toMatchObject({ decision: 'rejected', reason: 'over the refund limit of 100' });
    const events = await session.events();
    expect(ofType(events, 'approval.decided')).toMatchObject([{ decision: 'rejected', reason: 'over the refund limit of 100' }]);
    // The inspector's fold of the log shows it with the decision.
    expect(sessionAt(events, events.length).approval).toMatchObject({ decision: 'rejected', reason: 'over the refund limit of 100' });
    // The refusal is journaled as the call's outcome, reason included.
    const journal = await runtime.store.readJournal(session.id);
    expect(journal.find((e) => e.key === 'helping@2/1')?.completed).toMatchObject({
      ok: false,
      error: { code: 'APPROVAL_REJECTED', message: expect.stringContaining('over the refund limit of 100') },
    });
  });

  it('is cut to 2,000 characters wherever it goes', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":500}' }]), reply('No.'));
    const t = payTools();
    const machine = payAgent(t);
    const runtime = createRuntime({ machines: [machine], llm: openai(), store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay me 500' });
    await session.send({ type: 'REJECT', reason: 'x'.repeat(50_000) });

    const stored = (await session.snapshot()).approval!.reason!;
    expect(stored).toHaveLength(2_000);
    expect(ofType(await session.events(), 'approval.decided')[0]!.reason).toBe(stored);
    const message = toolAnswer(1, 'p1').error!.message;
    expect(message).toBe(`'pay' was rejected by a person: ${stored}`);
  });

  it('without a reason, the model is told the call was rejected and the decision stores none', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":5}' }]), reply('Not paid.'));
    const t = payTools();
    const machine = payAgent(t);
    const runtime = createRuntime({ machines: [machine], llm: openai(), store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay me 5' });
    await session.send({ type: 'REJECT' });
    expect(toolAnswer(1, 'p1').error).toEqual({ code: 'APPROVAL_REJECTED', message: "'pay' was rejected by a person (no reason given)" });
    expect((await session.snapshot()).approval).not.toHaveProperty('reason');
    expect(ofType(await session.events(), 'approval.decided')).toMatchObject([{ decision: 'rejected', reason: null }]);
  });

  it('replays byte for byte from the recording, the reason included, calling neither the model nor the tool', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":500}' }]), reply('I will not pay that.'));
    const t = payTools();
    const machine = payAgent(t);
    const runtime = createRuntime({ machines: [machine], llm: openai(), clock: createVirtualClock() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay me 500' });
    await session.send({ type: 'REJECT', reason: 'over the refund limit of 100' });
    const log = await session.events();
    const requests = fake().requests.length;

    const replaying = payTools();
    const replayed = await replaySession({ machine: payAgent(replaying), log, clock: createVirtualClock() });
    expect(fake().requests).toHaveLength(requests);
    expect(replaying.paid).toEqual([]);
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(log));
    expect(replayed.snapshot.approval).toMatchObject({ decision: 'rejected', reason: 'over the refund limit of 100' });
    expect(replayed.snapshot.context).toMatchObject({ answer: 'I will not pay that.' });
  });
});
