import { assign, setup } from 'xstate';
import { describe, expect, it, vi } from 'vitest';
import {
  createMemoryStore,
  createRuntime,
  createScriptedProvider,
  createVirtualClock,
  defineMachine,
  fromLlm,
  replaySession,
  type LlmProvider,
  type GenerateRequest,
  type LlmRequest,
  type RuntimeEvent,
} from '@flowing/runtime';
import type { Conversation, FlowSpecInput, MemorySpec } from '@flowing/spec';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { httpError, reply, stall, startFakeOpenAI, type FakeTurn } from '../helpers/fake-openai.ts';
import { defineTestMachine } from '../helpers/runtime-machines.ts';
import { createRecordingStore } from '../helpers/runtime-store.ts';

const MEMORY: MemorySpec = {
  window: 2,
  summarize: { after: 3, keep: ['orderId'], scripted: { patterns: { orderId: 'order (A\\d+)' } } },
};

/**
 * idle --SAY--> answering: the user's text is appended to `conversation`, a generate call answers from it (its memory
 * trims and summarises), and its new messages (a summary, if it made one) and its answer are appended on done.
 */
function deskMachine(memory: MemorySpec = MEMORY) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'memo-desk',
    context: {
      conversation: { type: 'conversation' },
      error: { type: 'string', optional: true },
    },
    events: { SAY: { text: { type: 'string' } } },
    initial: 'idle',
    states: {
      idle: { on: { SAY: { target: 'answering', assign: { conversation: 'context.conversation' } } } },
      answering: {
        invoke: {
          llm: 'generate',
          prompt: 'Answer the customer.',
          history: 'context.conversation',
          memory,
          onDone: { target: 'idle', assign: { conversation: 'context.conversation' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Context = { conversation: Conversation; error?: string };
  type Ev = { type: 'SAY'; text: string };
  const machine = setup({
    types: {} as { context: Context; events: Ev },
    actors: { 'llm.generate.answering': fromLlm('generate') },
  }).createMachine({
    id: 'memo-desk',
    context: { conversation: [] },
    initial: 'idle',
    states: {
      idle: {
        on: {
          SAY: {
            target: '#memo-desk.answering',
            actions: assign({
              conversation: ({ context, event }) => [...context.conversation, { role: 'user' as const, content: event.text }],
            }),
          },
        },
      },
      answering: {
        invoke: {
          id: 'answering',
          src: 'llm.generate.answering',
          input: ({ context }) =>
            ({
              kind: 'generate',
              prompt: 'Answer the customer.',
              history: context.conversation,
              memory,
              scripted: { reply: 'Noted.' },
            }) as GenerateRequest,
          onDone: {
            target: '#memo-desk.idle',
            actions: assign({
              conversation: ({ context, event }) => {
                const output = event.output as { text: string; messages?: Conversation };
                return [...context.conversation, ...(output.messages ?? []), { role: 'assistant' as const, content: output.text }];
              },
            }),
          },
          onError: { target: '#memo-desk.idle', actions: assign({ error: ({ event }) => (event.error as { code: string }).code }) },
        },
      },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, []), machine });
}

/** The scripted model, remembering every request it was sent. */
function recordingModel(): { llm: LlmProvider; requests: LlmRequest[] } {
  const scripted = createScriptedProvider();
  const requests: LlmRequest[] = [];
  return {
    requests,
    llm: {
      ...scripted,
      extract(request, options) {
        requests.push(request);
        return scripted.extract(request, options);
      },
      generate(request, options) {
        requests.push(request);
        return scripted.generate(request, options);
      },
    },
  };
}

const historyOf = (request: LlmRequest) => request.history ?? [];
const conversationOf = (snapshot: { context: unknown }) => (snapshot.context as { conversation: Conversation }).conversation;

const SAID = ['Hi, about order A7: it is late.', 'Can you check?', 'It was a gift.', 'Any news?', 'Thanks.'];
const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

describe('memory in a session', () => {
  it('summarises before the call once more turns than `after` are unsummarised, logs it as its own call and appends it', async () => {
    const { llm, requests } = recordingModel();
    const machine = deskMachine();
    const runtime = createRuntime({ machines: [machine], llm, store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    for (const text of SAID) await session.send({ type: 'SAY', text });

    const events = await session.events();
    const started = ofType(events, 'llm.started');
    // Turns 1-3 go whole; turn 4 has 4 unsummarised turns (> 3): a summary first, folding turns 1-2 (4 messages).
    expect(started.map((d) => d.purpose ?? d.kind)).toEqual(['generate', 'generate', 'generate', 'summary', 'generate', 'generate']);
    const summaryCall = started[3]!;
    expect(summaryCall).toMatchObject({ kind: 'extract', callId: expect.stringMatching(/^answering@\d+\/summary$/) });
    expect(ofType(events, 'llm.completed').find((d) => d.callId === summaryCall.callId)?.output).toMatchObject({ orderId: 'A7' });
    // The summary, then the window: turns 3 and 4.
    expect(started[4]!.prompt).toMatchObject({ counter: 'gpt-tokenizer', messages: 4, omitted: 4, droppedTurns: 0 });

    const conversation = conversationOf(await session.snapshot());
    const summaries = conversation.filter((m) => m.role === 'summary');
    expect(summaries).toEqual([expect.objectContaining({ covers: 4, facts: { orderId: 'A7' } })]);
    expect(conversation.indexOf(summaries[0]!)).toBe(7); // after turn 4's user message, before its answer

    // The call after the summary was sent the summary and the turns after it; the next one too (still under `after`).
    const sent = requests.filter((r) => r.kind === 'generate').map((r) => historyOf(r));
    expect(sent[3]!.map((m) => m.role)).toEqual(['summary', 'user', 'assistant', 'user']);
    expect(sent[4]!.map((m) => m.role)).toEqual(['summary', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(sent[4]![0]).toMatchObject({ role: 'summary', facts: { orderId: 'A7' } });
    expect(requests.filter((r) => r.kind === 'extract')).toHaveLength(1);
  });

  it('asks a real OpenAI-compatible model for the summary (kept facts and text as a JSON schema) and sends it as context', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue(reply('One.'), reply('Two.'), reply('Three.'));
      fake.enqueue(reply(JSON.stringify({ orderId: 'A7', content: 'The customer asks why order A7 is late.' })), reply('Four.'));
      const llm = createOpenAIProvider({
        baseURL: fake.baseURL,
        apiKey: 'test-key',
        model: 'fake-model',
        modelOverride: null,
        timeoutMs: 5_000,
      });
      const machine = deskMachine();
      const runtime = createRuntime({ machines: [machine], llm, store: createMemoryStore() });
      const session = await runtime.createSession(machine);
      for (const text of SAID.slice(0, 4)) await session.send({ type: 'SAY', text });

      expect(fake.requests).toHaveLength(5);
      const summaryBody = JSON.stringify(fake.requests[3]!.body);
      expect(summaryBody).toContain('user: Hi, about order A7: it is late.');
      expect(summaryBody).toMatch(/properties.+orderId.+content/);
      const sent = JSON.stringify(fake.requests[4]!.body.messages);
      expect(sent).toContain('The customer asks why order A7 is late.');
      expect(sent).not.toContain('Hi, about order A7');
      const conversation = conversationOf(await session.snapshot());
      expect(conversation.filter((m) => m.role === 'summary')).toEqual([
        { role: 'summary', content: 'The customer asks why order A7 is late.', facts: { orderId: 'A7' }, covers: 4 },
      ]);
      expect(fake.requests.filter((r) => r.pairingError)).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('replays a session with summaries from its recording, asking no model', async () => {
    const machine = deskMachine();
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [machine], llm: createScriptedProvider(), store, clock: createVirtualClock() });
    const session = await runtime.createSession(machine, undefined, { sessionId: 'memo-1', traceId: 'trace-1' });
    for (const text of SAID) await session.send({ type: 'SAY', text });
    const log = await store.readEvents(session.id, 0);
    const journal = await store.readJournal(session.id);

    const replayed = await replaySession({ machine, log, journal, clock: createVirtualClock() });
    expect(replayed.answered.llm).toBe(log.filter((e) => e.type === 'llm.started').length);
    expect(JSON.stringify(replayed.snapshot.context)).toBe(JSON.stringify((await session.snapshot()).context));
    expect(journal.some((entry) => entry.key.endsWith('/summary') && entry.completed?.ok)).toBe(true);
  });

  it('resumes a session stopped while the call after a summary was in flight without asking for the summary again', async () => {
    const { store, dumps } = createRecordingStore();
    const machine = deskMachine();
    const scripted = createScriptedProvider();
    let generated = 0;
    // The fourth answer never comes: the process is gone while the call after the summary waits for its model.
    const llm: LlmProvider = {
      ...scripted,
      generate: (request, options) => (++generated === 4 ? new Promise(() => {}) : scripted.generate(request, options)),
    };
    const runtime = createRuntime({ machines: [machine], llm, store });
    const session = await runtime.createSession(machine);
    for (const text of SAID.slice(0, 3)) await session.send({ type: 'SAY', text });
    void session.send({ type: 'SAY', text: SAID[3]! });
    const summarised = (dump: (typeof dumps)[number]) => {
      const entries = [...(dump.journal.get(session.id)?.values() ?? [])];
      const summary = entries.find((e) => e.key.endsWith('/summary') && e.completed?.ok);
      return summary !== undefined && entries.some((e) => e.key === summary.key.replace(/\/summary$/, '') && !e.completed);
    };
    await vi.waitFor(() => expect(dumps.some(summarised)).toBe(true));
    const crashed = dumps.find(summarised)!;

    const { llm: after, requests } = recordingModel();
    const resumed = createRuntime({ machines: [machine], llm: after, store: createMemoryStore({ data: crashed }) });
    await resumed.resume(session.id);
    expect(requests.map((r) => r.kind)).toEqual(['generate']);
    expect(historyOf(requests[0]!)[0]).toMatchObject({ role: 'summary', facts: { orderId: 'A7' } });
    const conversation = conversationOf(await resumed.session(session.id).snapshot());
    expect(conversation.filter((m) => m.role === 'summary')).toHaveLength(1);
    expect(conversation.at(-1)).toEqual({ role: 'assistant', content: 'Noted.' });
  });

  it('fails the call with LLM_PROMPT_TOO_LARGE when even the last turn does not fit maxPromptTokens', async () => {
    const { llm, requests } = recordingModel();
    const machine = deskMachine({ window: 2, maxPromptTokens: 12 });
    const runtime = createRuntime({ machines: [machine], llm, store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'SAY', text: 'A long question that takes more than the few tokens this call may send to its model.' });
    expect(((await session.snapshot()).context as { error?: string }).error).toBe('LLM_PROMPT_TOO_LARGE');
    expect(ofType(await session.events(), 'llm.failed')[0]).toMatchObject({
      callId: expect.stringMatching(/^answering@/),
      error: { code: 'LLM_PROMPT_TOO_LARGE', message: expect.stringContaining('limit of 12') },
    });
    expect(requests).toHaveLength(0);
  });

  describe('a summary call that fails', () => {
    async function failedSummary(failure: FakeTurn, limits?: { llmTimeoutMs: number }) {
      const fake = await startFakeOpenAI();
      fake.enqueue(reply('One.'), reply('Two.'), reply('Three.'), failure, reply('Four.'));
      const llm = createOpenAIProvider({
        baseURL: fake.baseURL,
        apiKey: 'test-key',
        model: 'fake-model',
        modelOverride: null,
        timeoutMs: 5_000,
        retries: 0,
      });
      const machine = deskMachine();
      const clock = createVirtualClock();
      const runtime = createRuntime({ machines: [machine], llm, store: createMemoryStore(), clock, ...(limits ? { limits } : {}) });
      const session = await runtime.createSession(machine);
      try {
        for (const text of SAID.slice(0, 3)) await session.send({ type: 'SAY', text });
        const fourth = session.send({ type: 'SAY', text: SAID[3]! });
        if (failure.type === 'stall') {
          // The summary request hangs: the runtime's clock moves past the call's time limit.
          await vi.waitFor(() => expect(fake.requests).toHaveLength(4));
          await clock.advance(limits!.llmTimeoutMs);
        }
        await fourth;
        return { fake, machine, session, events: await session.events(), snapshot: await session.snapshot() };
      } finally {
        await fake.close();
      }
    }

    it('does not fail the call: it sends the plain window of recent turns and logs conversation.summary_failed', async () => {
      const { fake, events, snapshot } = await failedSummary(httpError(400, 'the summary model refused'));
      expect(fake.requests).toHaveLength(5);
      // The call after the failed summary: the last 2 turns (window 2), nothing older, no summary.
      const sent = JSON.stringify(fake.requests[4]!.body.messages);
      expect(sent).toContain('It was a gift.');
      expect(sent).toContain('Any news?');
      expect(sent).not.toContain('Hi, about order A7');
      expect(sent).not.toContain('Can you check?');
      const conversation = conversationOf(snapshot);
      expect(conversation.filter((m) => m.role === 'summary')).toEqual([]);
      expect(conversation.at(-1)).toEqual({ role: 'assistant', content: 'Four.' });
      expect((snapshot.context as { error?: string }).error).toBeUndefined();
      const failed = ofType(events, 'conversation.summary_failed');
      expect(failed).toEqual([
        {
          callId: expect.stringMatching(/^answering@\d+$/),
          summaryCallId: expect.stringMatching(/^answering@\d+\/summary$/),
          error: { code: 'LLM_FAILED', message: expect.stringContaining('the summary model refused') },
          fallback: 'window',
          window: 2,
        },
      ]);
      // Logged before the call it belongs to starts, after the summary call's own failure.
      const types = events.map((e) => e.type);
      const at = types.indexOf('conversation.summary_failed');
      expect(types.lastIndexOf('llm.failed')).toBeLessThan(at);
      expect(
        events.findIndex((e) => e.type === 'llm.started' && (e.data as { callId?: string }).callId === failed[0]!.callId),
      ).toBeGreaterThan(at);
      expect(ofType(events, 'llm.completed').at(-1)).toMatchObject({ callId: failed[0]!.callId });
    });

    it('falls back the same way when the summary model never answers (its time limit ends the wait)', async () => {
      const { events, snapshot } = await failedSummary(stall(), { llmTimeoutMs: 1_000 });
      expect(ofType(events, 'conversation.summary_failed')).toMatchObject([{ error: { code: 'LLM_TIMEOUT' } }]);
      expect(conversationOf(snapshot).at(-1)).toEqual({ role: 'assistant', content: 'Four.' });
    });

    it('replays from its recording to the same log, asking no model', async () => {
      const { machine, events, snapshot } = await failedSummary(httpError(400, 'the summary model refused'));
      const replayed = await replaySession({ machine, log: events, clock: createVirtualClock() });
      expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(events));
      expect(JSON.stringify(replayed.snapshot.context)).toBe(JSON.stringify(snapshot.context));
    });
  });

  it('logs a retried summary request as llm.retry of the summary call (an extract), and replays it the same', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue(reply('One.'), reply('Two.'), reply('Three.'), httpError(503, 'busy'));
      fake.enqueue(reply(JSON.stringify({ orderId: 'A7', content: 'Order A7 is late.' })), reply('Four.'));
      // Frozen time with real timers: the backoff waits for real (a few ms), the timestamps stay comparable.
      const clock = { now: () => 5_000_000, setTimeout, clearTimeout } as never;
      const llm = createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'k', model: 'm', modelOverride: null, retryBaseMs: 2 });
      const machine = deskMachine();
      const runtime = createRuntime({ machines: [machine], llm, store: createMemoryStore(), clock });
      const session = await runtime.createSession(machine);
      for (const text of SAID.slice(0, 4)) await session.send({ type: 'SAY', text });
      const log = await session.events();
      expect(ofType(log, 'llm.retry')).toMatchObject([
        { callId: expect.stringMatching(/\/summary$/), kind: 'extract', attempt: 2, error: { code: 'LLM_FAILED' } },
      ]);
      const replayed = await replaySession({ machine, log, clock });
      expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(log));
    } finally {
      await fake.close();
    }
  });
});
