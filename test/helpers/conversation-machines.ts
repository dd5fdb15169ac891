import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyMachineDefinition } from '@flowing/runtime';
import type { Codegen } from '../../codegen/index.ts';

export const DESK = 'machines/chat-desk/chat-desk.flow.json';
export const NOTES = 'machines/chat-notes/chat-notes.flow.json';

/**
 * `chat-desk`: each USER_MESSAGE is appended to the conversation, then an agent (which may trace a shipment) answers
 * from it; its turns are appended on done. CLOSE hands the conversation to the child machine `chat-notes`.
 */
export function deskSpec(): any {
  return {
    specVersion: 1,
    id: 'chat-desk',
    context: {
      conversation: { type: 'conversation' },
      lastReply: { type: 'string', optional: true },
      notes: { type: 'string', optional: true },
    },
    events: { USER_MESSAGE: { text: { type: 'string' } }, CLOSE: {} },
    initial: 'idle',
    states: {
      idle: {
        on: {
          USER_MESSAGE: { target: 'answer', assign: { conversation: 'append(context.conversation, event.text)' } },
          CLOSE: 'notes',
        },
      },
      answer: {
        invoke: {
          llm: 'agent',
          system: 'You help customers with their parcels.',
          history: 'context.conversation',
          tools: ['trace_shipment'],
          onDone: { target: 'idle', assign: { lastReply: 'output.text' } },
          onError: 'idle',
        },
      },
      notes: {
        invoke: {
          machine: 'chat-notes',
          input: { conversation: 'context.conversation' },
          onDone: { target: 'closed', assign: { notes: 'output.summary' } },
          onError: 'closed',
        },
      },
      closed: { type: 'final' },
    },
  };
}

/** `chat-notes`: summarises the conversation it is given with one generate call, and returns the summary. */
export function notesSpec(): any {
  return {
    specVersion: 1,
    id: 'chat-notes',
    context: { conversation: { type: 'conversation' }, summary: { type: 'string', optional: true } },
    output: { summary: { type: 'string' } },
    initial: 'write',
    states: {
      write: {
        invoke: {
          llm: 'generate',
          history: 'context.conversation',
          prompt: 'Write a one-line note of this conversation.',
          onDone: { target: 'done', assign: { summary: 'output.text' } },
          onError: 'done',
        },
      },
      done: { type: 'final', output: { summary: "context.summary ?? ''" } },
    },
  };
}

export async function writeSpec(dir: string, file: string, spec: unknown): Promise<void> {
  await mkdir(join(dir, file, '..'), { recursive: true });
  await writeFile(join(dir, file), JSON.stringify(spec, null, 2));
}

/** Writes both specs into a project copy, generates them (failing on any error) and loads the generated machines. */
export async function generateConversationMachines(
  dir: string,
  codegen: Codegen,
): Promise<{ desk: AnyMachineDefinition; notes: AnyMachineDefinition }> {
  await writeSpec(dir, NOTES, notesSpec());
  await writeSpec(dir, DESK, deskSpec());
  for (const file of [NOTES, DESK]) {
    const result = await codegen.generate(file);
    const errors = result.problems.filter((p) => p.severity === 'error');
    if (errors.length > 0) throw new Error(`codegen of ${file} failed: ${JSON.stringify(errors, null, 2)}`);
  }
  const load = async (id: string) =>
    (await import(pathToFileURL(join(dir, `machines/${id}/${id}.machine.ts`)).href)) as Record<string, AnyMachineDefinition>;
  return { desk: (await load('chat-desk')).chatDesk!, notes: (await load('chat-notes')).chatNotes! };
}
