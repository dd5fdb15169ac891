import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DESK, deskSpec, generateConversationMachines, writeSpec } from '../helpers/conversation-machines.ts';
import { useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject('flowing-conversation-codegen-');

async function generateDesk(edit: (spec: any) => void) {
  const spec = deskSpec();
  edit(spec);
  await writeSpec(project.dir, DESK, spec);
  try {
    return await project.codegen.generate(DESK, { write: false });
  } finally {
    await writeSpec(project.dir, DESK, deskSpec());
  }
}

const typeErrors = (result: Awaited<ReturnType<typeof generateDesk>>) => result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');

describe('codegen of conversations', () => {
  beforeAll(async () => {
    await generateConversationMachines(project.dir, project.codegen);
  }, 120_000);

  it('types the field as a message list that starts empty, appends with appendMessage, and passes the history', async () => {
    const text = await readFile(join(project.dir, 'machines/chat-desk/chat-desk.machine.ts'), 'utf8');
    expect(text).toMatch(/import \{ appendMessage, .*type ConversationMessage \} from "@flowing\/runtime";/);
    expect(text).toContain('conversation: ConversationMessage[];');
    expect(text).toMatch(/context: \(\{ input \}\) => \(\{ conversation: \[\], \.\.\.input \}\)/);
    expect(text).toContain('appendMessage(context.conversation, event.text)');
    expect(text).toContain('history: context.conversation');
  });

  it("appends the agent's new messages on done, before the spec's own assign", async () => {
    const text = await readFile(join(project.dir, 'machines/chat-desk/chat-desk.machine.ts'), 'utf8');
    expect(text).toMatch(
      /appendConversation: assign\(\{\s*conversation: \(\{ context \}, output: Output<"llm\.agent">\) => \[\.\.\.context\.conversation, \.\.\.\(output\.messages \?\? \[\]\)\]/,
    );
    expect(text).toMatch(/onDone: \{\s*target: "idle",\s*actions: \[\s*\{ type: "appendConversation", [^\n]*\n\s*\{ type: "setLastReply"/);
  });

  it('maps appending a number to the conversation to that assign, as a type error', async () => {
    const result = await generateDesk((spec) => {
      spec.events.USER_MESSAGE.n = { type: 'number' };
      spec.states.idle.on.USER_MESSAGE.assign.conversation = 'append(context.conversation, event.n)';
    });
    const errors = typeErrors(result);
    expect(errors.map((e) => e.path)).toEqual(['/states/idle/on/USER_MESSAGE/assign/conversation']);
    expect(errors[0]!.message).toMatch(/'number' is not assignable to parameter of type 'string'/);
  }, 60_000);

  it('maps appending to a field that is not a conversation to that assign, as a type error', async () => {
    const result = await generateDesk((spec) => {
      spec.states.idle.on.USER_MESSAGE.assign = { lastReply: 'append(context.conversation, event.text)' };
    });
    expect(typeErrors(result).map((e) => e.path)).toEqual(['/states/idle/on/USER_MESSAGE/assign/lastReply']);
  }, 60_000);

  it('refuses a child input that maps a string to the child conversation, at that input field', async () => {
    const result = await generateDesk((spec) => {
      spec.states.notes.invoke.input.conversation = "context.lastReply ?? ''";
    });
    expect(typeErrors(result).map((e) => e.path)).toEqual(['/states/notes/invoke/input/conversation']);
  }, 60_000);
});
