// The inspector shows a conversation field as a chat transcript at each step, in Chromium.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { assign, setup } from 'xstate';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  appendMessage,
  createRuntime,
  createScriptedProvider,
  createXStateTrace,
  fromLlm,
  type ConversationMessage,
  type Runtime,
} from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { startStudio } from '@flowing/studio/server';
import type { FlowSpecInput } from '@flowing/spec';
import { traceShipment } from '../../tools/trace_shipment.ts';
import { copyProject } from '../helpers/project.ts';
import { defineTestMachine } from '../helpers/runtime-machines.ts';
import { launchChromium, openPage, screenshot } from './browser.ts';

const spec: FlowSpecInput = {
  specVersion: 1,
  id: 'chat-desk',
  context: { conversation: { type: 'conversation' }, turns: { type: 'number', default: 0 } },
  events: { USER_MESSAGE: { text: { type: 'string' } } },
  initial: 'idle',
  states: {
    idle: {
      on: { USER_MESSAGE: { target: 'answer', assign: { conversation: 'append(context.conversation, event.text)' } } },
    },
    answer: {
      invoke: {
        llm: 'agent',
        history: 'context.conversation',
        tools: ['trace_shipment'],
        onDone: { target: 'idle', assign: { turns: 'context.turns + 1' } },
        onError: 'idle',
      },
    },
  },
};

/** The machine codegen writes for `spec` (the agent's new messages appended on done), by hand. */
function chatDesk() {
  type Context = { conversation: ConversationMessage[]; turns: number };
  const machine = setup({
    types: {} as { context: Context; events: { type: 'USER_MESSAGE'; text: string }; input: Partial<Context> | undefined },
    actors: { 'llm.agent': fromLlm('agent') },
  }).createMachine({
    id: 'chat-desk',
    context: ({ input }) => ({ conversation: [], turns: 0, ...input }),
    initial: 'idle',
    states: {
      idle: {
        on: {
          USER_MESSAGE: {
            target: 'answer',
            actions: assign({ conversation: ({ context, event }) => appendMessage(context.conversation, event.text) }),
          },
        },
      },
      answer: {
        invoke: {
          id: 'answer',
          src: 'llm.agent',
          input: ({ context }) => ({
            kind: 'agent' as const,
            history: context.conversation,
            prompt: '',
            tools: ['trace_shipment'],
            maxIterations: 5,
          }),
          onDone: {
            target: 'idle',
            actions: assign({
              conversation: ({ context, event }) => [...context.conversation, ...(event.output.messages ?? [])],
              turns: ({ context }) => context.turns + 1,
            }),
          },
          onError: 'idle',
        },
      },
    },
  });
  return defineTestMachine(spec, machine, [traceShipment]);
}

/** An earlier exchange the session starts with: a summary, a question, a tool call with its result, the answer. */
const EARLIER: ConversationMessage[] = [
  { role: 'summary', content: 'The customer asked about two parcels.', facts: { orderId: 'A1001' }, covers: 6 },
  { role: 'user', content: 'Where is TRK-88231?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'call_1', name: 'trace_shipment', args: { tracking_number: 'TRK-88231' } }],
    agent: 'chat-desk.answer',
  },
  { role: 'tool', toolCallId: 'call_1', name: 'trace_shipment', content: '{"location":"Leipzig hub"}', ok: true },
  { role: 'assistant', content: 'It is at the Leipzig hub.', agent: 'chat-desk.answer' },
];

let browser: Browser;
let studio: { url: string; close(): Promise<void> };
let runtime: Runtime;
let store: SqliteStore;
let removeCopy: () => Promise<void>;

beforeAll(async () => {
  browser = await launchChromium();
  const copy = await copyProject('flowing-inspect-conversation-');
  removeCopy = copy.remove;
  await mkdir(join(copy.dir, 'machines/chat-desk'), { recursive: true });
  await writeFile(join(copy.dir, 'machines/chat-desk/chat-desk.flow.json'), JSON.stringify(spec, null, 2));
  store = createSqliteStore({ projectDir: copy.dir });
  // As `flowing studio` mounts its runtime: the inspector also reads the XState trace.
  const xstateTrace = createXStateTrace();
  runtime = createRuntime({ machines: [chatDesk()], store, llm: createScriptedProvider(), inspect: xstateTrace.inspect });
  const app = createServer(runtime, {
    specs: { 'chat-desk': spec },
    xstateTrace,
    rateLimit: { client: false, session: false },
    log: () => {},
  });
  studio = await startStudio({
    rootDir: copy.dir,
    appDir: inject('studioAppDir'),
    port: 0,
    host: '127.0.0.1',
    runtimeApp: { fetch: app.fetch, close: async () => app.dispose() },
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await studio?.close();
  await store?.close();
  await removeCopy?.();
});

const transcript = (page: Page) => page.locator('[data-testid=inspect-conversation][data-field=conversation]');

describe('a conversation in the inspector', () => {
  it('shows the conversation as a transcript at each step: messages, tool calls with results, summaries', async () => {
    const session = await runtime.createSession('chat-desk', { conversation: EARLIER });
    await session.send({ type: 'USER_MESSAGE', text: 'Thanks! And TRK-0?' });
    const events = await session.events();
    const { page, errors } = await openPage(browser);
    await page.goto(`${studio.url}#chat-desk`);
    await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
    await page.click('[data-testid=mode-inspect]');
    await page.locator(`[data-testid=inspect-session][data-session-id="${session.id}"]`).click({ timeout: 15_000 });
    await expect
      .poll(() => page.locator('[data-testid=inspect-event-count]').getAttribute('data-count'), { timeout: 15_000 })
      .toBe(String(events.length));

    // At the last step: the earlier exchange, the new question and the agent's answer (the scripted model echoes it).
    await expect.poll(() => transcript(page).getAttribute('data-count'), { timeout: 10_000 }).toBe('7');
    const roles = await transcript(page)
      .locator('li[data-role]')
      .evaluateAll((items) => items.map((i) => i.getAttribute('data-role')));
    // The tool result is shown inside its call, not as a message of its own.
    expect(roles).toEqual(['summary', 'user', 'assistant', 'assistant', 'user', 'assistant']);
    const call = transcript(page).locator('[data-testid=transcript-tool-call]');
    await expect.poll(() => call.textContent()).toContain('trace_shipment({"tracking_number":"TRK-88231"})');
    expect(await call.locator('[data-testid=transcript-tool-result]').textContent()).toContain('Leipzig hub');
    expect(await transcript(page).locator('li[data-role=summary]').textContent()).toContain('orderId');
    expect(await transcript(page).locator('li[data-role=user]').last().textContent()).toBe('Thanks! And TRK-0?');
    // The step's change to the conversation reads as a count of messages, not as JSON.
    expect(await page.locator('[data-testid=inspect-context-changes]').textContent()).toContain('conversation: +1 message');
    // The rest of the context is still JSON, without the conversation in it.
    expect(JSON.parse((await page.locator('[data-testid=inspect-context]').textContent()) ?? 'null')).toEqual({ turns: 1 });
    await screenshot(page, 'inspect-conversation');

    // Step back to the event where the question was appended: the answer is not there yet.
    const appended = events.find((e) => e.type === 'state.changed' && (e.data as { event?: string }).event === 'USER_MESSAGE')!;
    await page.locator(`[data-testid=inspect-event][data-seq="${appended.seq}"] button.inspect-event__line`).click();
    await expect.poll(() => transcript(page).getAttribute('data-count'), { timeout: 10_000 }).toBe('6');
    expect(await transcript(page).locator('li[data-role]').last().getAttribute('data-role')).toBe('user');

    // In the editor, the agent's model call shows the history it reads.
    await page.click('[data-testid=mode-edit]');
    await page.locator('[data-testid=state-answer]').click();
    await expect.poll(() => page.locator('[data-testid=llm-history]').inputValue(), { timeout: 10_000 }).toBe('context.conversation');
    expect(errors).toEqual([]);
  }, 90_000);
});
