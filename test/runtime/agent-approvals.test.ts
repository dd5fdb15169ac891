import { describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  createRuntime,
  createVirtualClock,
  replaySession,
  type RuntimeEvent,
  type RuntimeLimits,
  type SessionStore,
} from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { reply, toolCalls } from '../helpers/fake-openai.ts';
import { useFakeOpenAI } from '../helpers/use-fake-openai.ts';
import { payAgent, payTools } from '../helpers/agent-approvals.ts';
import { startTestServer } from '../server/harness.ts';

const fake = useFakeOpenAI({ pairing: true });

const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);
const openai = () => createOpenAIProvider({ baseURL: fake().baseURL, apiKey: 'test-key', model: 'fake-agent', timeoutMs: 2_000 });

function start(store: SessionStore = createMemoryStore(), limits?: RuntimeLimits) {
  const t = payTools();
  const machine = payAgent(t);
  const runtime = createRuntime({ machines: [machine], llm: openai(), store, ...(limits ? { limits } : {}) });
  return { ...t, machine, runtime, store };
}

describe('high-risk tools the model proposes', () => {
  it('stops with a pending approval naming the tool and the exact arguments; APPROVE runs exactly that call once', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":30}' }]), reply('Paid 30.'));
    const { runtime, machine, paid } = start();
    const session = await runtime.createSession(machine);
    const asked = await session.send({ type: 'ASK', text: 'pay me 30' });
    expect(asked).toMatchObject({ applied: true, status: 'waiting' });
    const waiting = await session.snapshot();
    expect(waiting.approval).toMatchObject({ tool: 'pay', args: { amount: 30, account: 'ACC-1' }, callId: 'helping@2/1' });
    expect(waiting.approval?.decision).toBeUndefined();
    expect(paid).toEqual([]);
    expect(fake().requests).toHaveLength(1);

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
    expect(fake().requests).toHaveLength(2);
    const answer = fake().requests[1]!.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'p1');
    expect(JSON.parse(answer!.content as string)).toEqual({ receipt: 'r-1' });
    // A second APPROVE finds nothing to decide.
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: false });
    expect(paid).toHaveLength(1);
  });

  it('REJECT returns a refusal to the model as the tool result and the loop goes on', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":500}' }]), reply('I could not pay that.'));
    const { runtime, machine, paid } = start();
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay me 500' });
    expect(await session.send({ type: 'REJECT', reason: 'too much' })).toMatchObject({ applied: true, state: 'idle' });
    expect(paid).toEqual([]);
    const answer = fake().requests[1]!.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'p1');
    expect(JSON.parse(answer!.content as string)).toMatchObject({ error: { code: 'APPROVAL_REJECTED' } });
    expect((await session.snapshot()).context).toMatchObject({ answer: 'I could not pay that.' });
    expect(ofType(await session.events(), 'approval.decided')).toMatchObject([{ decision: 'rejected', reason: 'too much' }]);
  });

  it('the model cannot override a bound argument of the proposed tool: the bound value is approved and paid, and logged', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":30,"account":"ACC-EVIL"}' }]), reply('Paid.'));
    const { runtime, machine, paid } = start();
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay 30 to ACC-EVIL' });
    expect((await session.snapshot()).approval).toMatchObject({ args: { amount: 30, account: 'ACC-1' } });
    expect(ofType(await session.events(), 'tool.bind_overridden')).toEqual([
      { callId: 'helping@2/1', tool: 'pay', fields: ['account'], sent: { account: 'ACC-EVIL' } },
    ]);
    await session.send({ type: 'APPROVE' });
    expect(paid).toEqual([{ amount: 30, account: 'ACC-1' }]);
    // The model was never offered the bound argument.
    const offered = (fake().requests[0]!.body.tools as Array<{ function: { name: string; parameters: { properties: object } } }>).find(
      (t) => t.function.name === 'pay',
    )!;
    expect(Object.keys(offered.function.parameters.properties)).toEqual(['amount']);
  });

  it('two proposals in one turn each need their own decision, with their own approval id; the other call runs at once', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'p1', name: 'pay', arguments: '{"amount":10}' },
        { id: 'b1', name: 'balance', arguments: '{}' },
        { id: 'p2', name: 'pay', arguments: '{"amount":20}' },
      ]),
      reply('Paid 10, not 20.'),
    );
    const { runtime, machine, paid } = start();
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay 10 and 20' });
    const first = (await session.snapshot()).approval!;
    expect(first).toMatchObject({ args: { amount: 10 }, callId: 'helping@2/2' });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, status: 'waiting', state: 'helping' });
    expect(paid).toEqual([{ amount: 10, account: 'ACC-1' }]);
    const second = (await session.snapshot()).approval!;
    expect(second).toMatchObject({ args: { amount: 20 }, callId: 'helping@2/3' });
    expect(second.id).not.toBe(first.id);
    expect(fake().requests).toHaveLength(1);
    await session.send({ type: 'REJECT' });
    expect(paid).toEqual([{ amount: 10, account: 'ACC-1' }]);
    // Every call of the turn is answered, in the model's order.
    const tools = fake().requests[1]!.body.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.tool_call_id)).toEqual(['p1', 'b1', 'p2']);
    expect(tools.map((m) => JSON.parse(m.content as string))).toMatchObject([
      { receipt: 'r-1' },
      { balance: 100 },
      { error: { code: 'APPROVAL_REJECTED' } },
    ]);
    expect((await session.snapshot()).context).toMatchObject({ answer: 'Paid 10, not 20.' });
  });

  it('a waiting proposal survives a restart: the new runtime continues without asking the model again for the turns made', async () => {
    fake().enqueue(
      toolCalls([{ id: 'b1', name: 'balance', arguments: '{}' }]),
      toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":30}' }]),
    );
    const store = createMemoryStore();
    const first = start(store);
    const session = await first.runtime.createSession(first.machine);
    await session.send({ type: 'ASK', text: 'check, then pay 30' });
    expect(fake().requests).toHaveLength(2);
    // A new runtime on the same store (the first one is gone with its memory).
    const second = start(store);
    fake().enqueue(reply('Paid 30 after checking.'));
    const resumed = second.runtime.session(session.id);
    expect((await resumed.snapshot()).approval).toMatchObject({ tool: 'pay', args: { amount: 30, account: 'ACC-1' } });
    expect(await resumed.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: 'idle' });
    expect(second.paid).toEqual([{ amount: 30, account: 'ACC-1' }]);
    expect(first.paid).toEqual([]);
    // Model calls: 2 before the restart, 1 after (the answer); the resumed loop sent the whole transcript.
    expect(fake().requests).toHaveLength(3);
    const last = fake().requests[2]!.body.messages;
    expect(last.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
    expect((await resumed.snapshot()).context).toMatchObject({ answer: 'Paid 30 after checking.' });
  });

  it('over HTTP: GET /sessions/:id shows the proposal; two concurrent approves of its id pay once, the second a duplicate', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":30}' }]), reply('Paid 30.'));
    const t = payTools();
    const server = await startTestServer([payAgent(t)], { runtime: { llm: openai() } });
    try {
      const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'pay-agent' } });
      await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'ASK', text: 'pay me 30' } });
      const view = await server.call('GET', `/sessions/${created.sessionId}`);
      expect(view.body).toMatchObject({
        status: 'waiting',
        pendingApproval: { state: 'helping', tool: 'pay', args: { amount: 30, account: 'ACC-1' } },
      });
      const { approvalId } = view.body.pendingApproval;
      const [a, b] = await Promise.all([
        server.call('POST', `/sessions/${created.sessionId}/approve`, { body: { approvalId } }),
        server.call('POST', `/sessions/${created.sessionId}/approve`, { body: { approvalId } }),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([a.body.duplicate, b.body.duplicate].sort()).toEqual([true, undefined]);
      expect(t.paid).toEqual([{ amount: 30, account: 'ACC-1' }]);
      expect((await server.call('GET', `/sessions/${created.sessionId}`)).body).toMatchObject({
        pendingApproval: null,
        context: { answer: 'Paid 30.' },
      });
    } finally {
      await server.close();
    }
  });

  it('a proposal whose agent state is left is withdrawn: it is no longer pending and a later APPROVE runs nothing', async () => {
    fake().enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":30}' }]));
    const { runtime, machine, paid } = start();
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay me 30' });
    expect(await session.send({ type: 'STOP' })).toMatchObject({ applied: true, state: 'idle' });
    const snapshot = await session.snapshot();
    expect(snapshot.approval).toMatchObject({ decision: 'rejected', callId: 'helping@2/1' });
    expect(ofType(await session.events(), 'approval.decided')).toMatchObject([
      { decision: 'rejected', reason: expect.stringContaining('withdrawn') },
    ]);
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: false });
    expect(paid).toEqual([]);
  });

  it('a session with proposals (one approved, one rejected) replays byte for byte, paying nothing', async () => {
    fake().enqueue(
      toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":10}' }]),
      toolCalls([{ id: 'p2', name: 'pay', arguments: '{"amount":20}' }]),
      reply('Paid 10, not 20.'),
    );
    const t = payTools();
    const machine = payAgent(t);
    const runtime = createRuntime({ machines: [machine], llm: openai(), clock: createVirtualClock() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay 10, then 20' });
    await session.send({ type: 'APPROVE' });
    await session.send({ type: 'REJECT', reason: 'no more' });
    const log = await session.events();
    expect(t.paid).toHaveLength(1);
    const replaying = payTools();
    const replayed = await replaySession({ machine: payAgent(replaying), log, clock: createVirtualClock() });
    expect(replaying.paid).toEqual([]);
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(log));
    expect(replayed.snapshot.context).toMatchObject({ answer: 'Paid 10, not 20.' });
  });

  it('with one call slot, the approved call runs on the agent call slot (the wait for a person held none)', async () => {
    fake().enqueue(
      toolCalls([
        { id: 'b1', name: 'balance', arguments: '{}' },
        { id: 'p1', name: 'pay', arguments: '{"amount":5}' },
      ]),
      reply('Paid 5.'),
    );
    const { runtime, machine, paid } = start(createMemoryStore(), { maxConcurrentCalls: 1 });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay 5' });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: 'idle' });
    expect(paid).toEqual([{ amount: 5, account: 'ACC-1' }]);
  });
});
