import { z } from 'zod';

/** One tool call an assistant message asked for; `args` are the arguments as run (bound ones included). */
export const ConversationToolCallSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  args: z.unknown(),
});

/**
 * One message of a conversation: what a person said, what an agent answered (with the tool calls it made), each
 * tool's result (paired with its call by `toolCallId`), and summaries of older messages. A summary stays in the list
 * where it was made and stands for the `covers` messages before it when a prompt is assembled; the list itself is
 * never rewritten, so the transcript keeps everything.
 */
export const ConversationMessageSchema = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('user'), content: z.string() }),
  z.strictObject({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(ConversationToolCallSchema).optional(),
    /** The machine and state of the agent call that answered (`triage.route`), for transcripts across agents. */
    agent: z.string().optional(),
  }),
  z.strictObject({
    role: z.literal('tool'),
    toolCallId: z.string(),
    name: z.string(),
    /** The tool's output or error, as JSON text (what the model saw). */
    content: z.string(),
    ok: z.boolean(),
  }),
  z.strictObject({
    role: z.literal('summary'),
    content: z.string(),
    /** The facts the summary keeps, by the names the call declared. */
    facts: z.record(z.string(), z.unknown()),
    covers: z.number().int().nonnegative(),
  }),
]);

export type ConversationToolCall = z.infer<typeof ConversationToolCallSchema>;
export type ConversationMessage = z.infer<typeof ConversationMessageSchema>;
export const ConversationSchema = z.array(ConversationMessageSchema);
export type Conversation = ConversationMessage[];
