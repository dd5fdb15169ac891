import type { ConversationMessage } from '@flowing/spec';

/**
 * An agent call's new messages as they go into the conversation: each assistant turn names the agent that answered
 * (`<machine>.<state>`), and each tool call carries its arguments as run, the bound ones included (the model never
 * sent those). Tool results are kept where the provider put them: right after their turn, in the model's order.
 */
export function conversationMessages(
  messages: readonly ConversationMessage[],
  agent: string | undefined,
  bound: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined,
): ConversationMessage[] {
  return messages.map((message) => {
    if (message.role !== 'assistant') return message;
    const toolCalls = message.toolCalls?.map((call) => {
      const fixed = bound?.[call.name];
      if (!fixed) return call;
      const given = call.args !== null && typeof call.args === 'object' && !Array.isArray(call.args) ? call.args : {};
      return { ...call, args: { ...given, ...fixed } };
    });
    return { ...message, ...(toolCalls ? { toolCalls } : {}), ...(agent ? { agent } : {}) };
  });
}
