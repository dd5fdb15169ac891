import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ConversationMessage } from '@flowing/spec';
import { promptHistory } from '../history.ts';
import type { LlmRequestBase } from '../types.ts';

/** What a tool call whose result never made it into the conversation (a crash between the two) answers. */
const INTERRUPTED = JSON.stringify({ error: { code: 'INTERRUPTED', message: 'the tool call was interrupted; its result is unknown' } });

/**
 * The chat messages of a request: its system prompt, its history, and its own text last (left out when the call has
 * a history and no text of its own). The Chat Completions API refuses an assistant message with `tool_calls` that is
 * not followed by one tool message per call id, and a tool message that answers no call: a call without a result is
 * answered as interrupted, a result without its call (cut off by a summary) is left out.
 * @internal
 */
export function chatMessages(request: LlmRequestBase, system: string | undefined, own: string): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [];
  if (system) messages.push({ role: 'system', content: system });
  const history = promptHistory(request.history);
  messages.push(...historyToChat(history));
  if (own !== '' || history.length === 0) messages.push({ role: 'user', content: own });
  return messages;
}

/** A conversation as Chat Completions messages, tool calls paired with their results. @internal */
export function historyToChat(history: readonly ConversationMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  let pending: string[] = [];
  const flush = () => {
    for (const id of pending) out.push({ role: 'tool', tool_call_id: id, content: INTERRUPTED });
    pending = [];
  };
  for (const message of history) {
    if (message.role === 'tool') {
      const at = pending.indexOf(message.toolCallId);
      if (at === -1) continue;
      pending.splice(at, 1);
      out.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.content });
      continue;
    }
    flush();
    switch (message.role) {
      case 'user':
        out.push({ role: 'user', content: message.content });
        break;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        out.push({
          role: 'assistant',
          content: message.content === '' && calls.length > 0 ? null : message.content,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
                })),
              }
            : {}),
        });
        pending = calls.map((c) => c.id);
        break;
      }
      case 'summary':
        out.push({ role: 'system', content: summaryText(message) });
        break;
    }
  }
  flush();
  return out;
}

function summaryText(message: Extract<ConversationMessage, { role: 'summary' }>): string {
  const facts = Object.keys(message.facts).length > 0 ? `\nFacts: ${JSON.stringify(message.facts)}` : '';
  return `Summary of the earlier conversation: ${message.content}${facts}`;
}
