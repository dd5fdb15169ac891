import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, createVirtualClock, replaySession, type AnyMachineDefinition, type ConversationMessage } from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { generateConversationMachines } from '../helpers/conversation-machines.ts';
import { reply, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../helpers/fake-openai.ts';
import { useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject('flowing-conversation-');
let machines: { desk: AnyMachineDefinition; notes: AnyMachineDefinition };
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  machines = await generateConversationMachines(project.dir, project.codegen);
}, 180_000);
afterAll(async () => {
  await fake.close();
});
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
  // Every request the model got paired each tool call with its result, and none was left unanswered.
  expect(fake.requests.filter((r) => r.pairingError)).toEqual([]);
  expect(fake.pending()).toBe(0);
  fake.requests.length = 0;
});

const llm = () =>
  createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'test-key', model: 'fake-model', modelOverride: null, timeoutMs: 5_000 });

async function sqliteFile(): Promise<{ open: () => SqliteStore }> {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-conversation-'));
  const opened: SqliteStore[] = [];
  cleanup.push(async () => {
    for (const store of opened) await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    open: () => {
      const store = createSqliteStore({ file: join(dir, 'sessions.db') });
      opened.push(store);
      return store;
    },
  };
}

/** The first turn: the model traces a parcel, then answers. */
function firstTurn() {
  fake.enqueue(
    toolCalls([{ id: 'call_1', name: 'trace_shipment', arguments: '{"tracking_number":"TRK-88231"}' }]),
    reply('Your parcel is at the Leipzig hub.'),
  );
}

const FIRST_TURN: ConversationMessage[] = [
  { role: 'user', content: 'where is TRK-88231?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'call_1', name: 'trace_shipment', args: { tracking_number: 'TRK-88231' } }],
    agent: 'chat-desk.answer',
  },
  {
    role: 'tool',
    toolCallId: 'call_1',
    name: 'trace_shipment',
    content: '{"carrier":"Parcelo","location":"Leipzig hub","eta":"2026-12-02"}',
    ok: true,
  },
  { role: 'assistant', content: 'Your parcel is at the Leipzig hub.', agent: 'chat-desk.answer' },
];

const contextOf = async (session: { snapshot(): Promise<{ context: unknown }> }) =>
  (await session.snapshot()).context as { conversation: ConversationMessage[]; notes?: string };

describe('a conversation field in a running session', () => {
  it('holds the user message once, the tool call with its result and the answer, and the model reads it all next turn', async () => {
    const runtime = createRuntime({ machines: [machines.desk, machines.notes], llm: llm() });
    const session = await runtime.createSession('chat-desk');
    firstTurn();
    await session.send({ type: 'USER_MESSAGE', text: 'where is TRK-88231?' });
    expect((await contextOf(session)).conversation).toEqual(FIRST_TURN);

    fake.enqueue(reply('Tomorrow, 2 December.'));
    await session.send({ type: 'USER_MESSAGE', text: 'when will it arrive?' });
    const sent = fake.requests.at(-1)!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'when will it arrive?' });
    expect((await contextOf(session)).conversation.slice(4)).toEqual([
      { role: 'user', content: 'when will it arrive?' },
      { role: 'assistant', content: 'Tomorrow, 2 December.', agent: 'chat-desk.answer' },
    ]);
  });

  it('carries the conversation into a child machine through its input mapping', async () => {
    const runtime = createRuntime({ machines: [machines.desk, machines.notes], llm: llm() });
    const session = await runtime.createSession('chat-desk');
    firstTurn();
    await session.send({ type: 'USER_MESSAGE', text: 'where is TRK-88231?' });
    fake.enqueue(reply('Customer asked for TRK-88231; it is at the Leipzig hub.'));
    await session.send({ type: 'CLOSE' });
    expect(await session.snapshot()).toMatchObject({
      status: 'done',
      context: { notes: 'Customer asked for TRK-88231; it is at the Leipzig hub.' },
    });
    const child = fake.requests.at(-1)!.body.messages;
    expect(child.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(child.at(-1)).toEqual({ role: 'user', content: 'Write a one-line note of this conversation.' });
  });

  it('survives a restart on SQLite: the stored conversation is read back and the next turn builds on it', async () => {
    const db = await sqliteFile();
    const first = createRuntime({ machines: [machines.desk, machines.notes], llm: llm(), store: db.open() });
    const session = await first.createSession('chat-desk');
    firstTurn();
    await session.send({ type: 'USER_MESSAGE', text: 'where is TRK-88231?' });

    const again = createRuntime({ machines: [machines.desk, machines.notes], llm: llm(), store: db.open() });
    const restored = again.session(session.id);
    expect((await contextOf(restored)).conversation).toEqual(FIRST_TURN);
    fake.enqueue(reply('Tomorrow.'));
    await restored.send({ type: 'USER_MESSAGE', text: 'when?' });
    expect(fake.requests.at(-1)!.body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect((await contextOf(restored)).conversation).toHaveLength(6);
  });

  it('forks with the conversation as it was at the fork point; the fork and its parent then go separate ways', async () => {
    const runtime = createRuntime({ machines: [machines.desk, machines.notes], llm: llm() });
    const parent = await runtime.createSession('chat-desk');
    firstTurn();
    await parent.send({ type: 'USER_MESSAGE', text: 'where is TRK-88231?' });
    const at = (await parent.events()).at(-1)!.seq;
    fake.enqueue(reply('Tomorrow.'));
    await parent.send({ type: 'USER_MESSAGE', text: 'when?' });

    const fork = await runtime.forkSession(parent.id, at);
    expect((await contextOf(fork)).conversation).toEqual(FIRST_TURN);
    fake.enqueue(reply('It is a blue box.'));
    await fork.send({ type: 'USER_MESSAGE', text: 'what does it look like?' });
    expect((await contextOf(fork)).conversation.slice(4).map((m) => m.content)).toEqual(['what does it look like?', 'It is a blue box.']);
    expect((await contextOf(parent)).conversation.slice(4).map((m) => m.content)).toEqual(['when?', 'Tomorrow.']);
  });

  it('replays with no model call to the same conversation, byte for byte', async () => {
    const db = await sqliteFile();
    const store = db.open();
    // The clock is virtual on both sides: a replay compares every event, timestamps included.
    const runtime = createRuntime({ machines: [machines.desk, machines.notes], llm: llm(), store, clock: createVirtualClock() });
    const session = await runtime.createSession('chat-desk');
    firstTurn();
    await session.send({ type: 'USER_MESSAGE', text: 'where is TRK-88231?' });
    fake.enqueue(reply('Tomorrow.'));
    await session.send({ type: 'USER_MESSAGE', text: 'when?' });
    const requests = fake.requests.length;
    const replayed = await replaySession({
      machine: machines.desk,
      log: await store.readEvents(session.id, 0),
      journal: await store.readJournal(session.id),
      clock: createVirtualClock(),
    });
    expect(fake.requests.length).toBe(requests);
    expect(JSON.stringify(replayed.snapshot.context)).toBe(JSON.stringify((await session.snapshot()).context));
    expect((replayed.snapshot.context as { conversation: unknown[] }).conversation).toHaveLength(6);
  });
});
