import { describe, expect, it } from 'vitest';
import { createRuntime, replaySession, type Clock, type RuntimeEvent } from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { payAgent, payTools } from '../helpers/agent-approvals.ts';
import { httpError, reply, toolCalls } from '../helpers/fake-openai.ts';
import { useFakeOpenAI } from '../helpers/use-fake-openai.ts';

const fake = useFakeOpenAI();

// Frozen time with real timers: the provider's backoff waits for real (a few ms), the timestamps stay comparable.
const clock: Clock = {
  now: () => 5_000_000,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};
const openai = () =>
  createOpenAIProvider({
    baseURL: fake().baseURL,
    apiKey: 'test-key',
    model: 'fake-agent',
    timeoutMs: 2_000,
    retryBaseMs: 2,
    random: () => 0.5,
  });
const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

async function record() {
  const t = payTools();
  const machine = payAgent(t);
  const runtime = createRuntime({ machines: [machine], llm: openai(), clock });
  const session = await runtime.createSession(machine);
  return { session, machine };
}

describe('retried model requests in a replay', () => {
  it('shows the same llm.retry events as the recording, in the same places, asking no model', async () => {
    fake().enqueue(httpError(503, 'overloaded'), httpError(429, 'slow down'), reply('All fine.'));
    const { session } = await record();
    await session.send({ type: 'ASK', text: 'how are things' });
    const log = await session.events();
    expect(ofType(log, 'llm.retry')).toMatchObject([
      { callId: 'helping@2', attempt: 2, error: { code: 'LLM_FAILED' } },
      { callId: 'helping@2', attempt: 3, error: { code: 'LLM_RATE_LIMITED' } },
    ]);
    const requests = fake().requests.length;

    const replayed = await replaySession({ machine: payAgent(payTools()), log, clock });
    expect(fake().requests).toHaveLength(requests);
    expect(ofType(replayed.events, 'llm.retry')).toEqual(ofType(log, 'llm.retry'));
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(log));
  });

  it('keeps the retries of each turn of an agent loop with that turn, also after a stop for approval', async () => {
    fake().enqueue(
      httpError(500, 'boom'),
      toolCalls([{ id: 'b1', name: 'balance', arguments: '{}' }]),
      toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":5}' }]),
      httpError(502, 'bad gateway'),
      reply('Paid 5.'),
    );
    const t = payTools();
    const machine = payAgent(t);
    const runtime = createRuntime({ machines: [machine], llm: openai(), clock });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'check, then pay 5' });
    await session.send({ type: 'APPROVE' });
    const log = await session.events();
    expect(ofType(log, 'llm.retry')).toHaveLength(2);
    expect(t.paid).toEqual([{ amount: 5, account: 'ACC-1' }]);

    const replaying = payTools();
    const replayed = await replaySession({ machine: payAgent(replaying), log, clock });
    expect(replaying.paid).toEqual([]);
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(log));
  });
});
