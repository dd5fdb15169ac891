import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, createScriptedProvider, type AnyMachineDefinition } from '@flowing/runtime';
import type { Conversation } from '@flowing/spec';
import { writeSpec } from '../helpers/conversation-machines.ts';
import { useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject('flowing-memory-codegen-');
const FILE = 'machines/memo-chat/memo-chat.flow.json';

/** Each SAY is appended to the conversation; a generate call answers from it with a memory that summarises. */
function memoSpec(kind: 'generate' | 'extract') {
  const call =
    kind === 'generate'
      ? { llm: 'generate', prompt: 'Answer the customer.', scripted: { reply: 'Noted.' } }
      : { llm: 'extract', fields: { orderId: { type: 'string', optional: true } } };
  return {
    specVersion: 1,
    id: 'memo-chat',
    context: { conversation: { type: 'conversation' } },
    events: { SAY: { text: { type: 'string' } } },
    initial: 'idle',
    states: {
      idle: { on: { SAY: { target: 'answer', assign: { conversation: 'append(context.conversation, event.text)' } } } },
      answer: {
        invoke: {
          ...call,
          history: 'context.conversation',
          memory: { window: 1, summarize: { after: 2, keep: ['orderId'], scripted: { patterns: { orderId: 'order (A\\d+)' } } } },
          onDone: 'idle',
          onError: 'idle',
        },
      },
    },
  };
}

async function generate(kind: 'generate' | 'extract'): Promise<AnyMachineDefinition> {
  await writeSpec(project.dir, FILE, memoSpec(kind));
  const result = await project.codegen.generate(FILE);
  expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
  const url = `${pathToFileURL(join(project.dir, 'machines/memo-chat/memo-chat.machine.ts')).href}?${kind}`;
  return ((await import(url)) as Record<string, AnyMachineDefinition>).memoChat!;
}

describe('generated machines with memory', () => {
  for (const kind of ['generate', 'extract'] as const) {
    it(`${kind}: the call's summary is appended to the conversation by the generated onDone, and used by the next call`, async () => {
      const machine = await generate(kind);
      const runtime = createRuntime({ machines: [machine], llm: createScriptedProvider(), store: createMemoryStore() });
      const session = await runtime.createSession(machine);
      for (const text of ['About order A7.', 'Is it late?', 'Any news?', 'Thanks.']) await session.send({ type: 'SAY', text });
      const conversation = ((await session.snapshot()).context as { conversation: Conversation }).conversation;
      // Turn 3 has 3 unsummarised turns (> 2): one summary, folding turns 1 and 2; turn 4 has 2 and makes none.
      expect(conversation.filter((m) => m.role === 'summary')).toEqual([expect.objectContaining({ facts: { orderId: 'A7' } })]);
      const summaries = (await session.events()).filter((e) => e.type === 'llm.started' && e.data.purpose === 'summary');
      expect(summaries).toHaveLength(1);
      const calls = (await session.events()).filter((e) => e.type === 'llm.started' && e.data.kind === kind);
      expect(calls.at(-1)!.data.prompt).toMatchObject({ omitted: expect.any(Number) });
      expect((calls.at(-1)!.data.prompt as { omitted: number }).omitted).toBeGreaterThan(0);
    }, 120_000);
  }
});
