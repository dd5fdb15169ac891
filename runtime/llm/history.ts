import type { ConversationMessage } from '@flowing/spec';

/**
 * The conversation with a user message added: what `append(context.conversation, event.text)` compiles to in a
 * generated machine. The list is copied, never changed in place (it is context, kept in snapshots).
 * @example appendMessage([], 'where is my order?') // [{ role: 'user', content: 'where is my order?' }]
 */
export function appendMessage(list: readonly ConversationMessage[], content: string): ConversationMessage[] {
  return [...list, { role: 'user', content }];
}

/**
 * The messages of a history a model reads, in order. The one place where a call's history becomes its prompt's
 * messages (every provider goes through it): a summary stands for the `covers` messages before it, so those are left
 * out and the summary is kept.
 */
export function promptHistory(history: readonly ConversationMessage[] | undefined): ConversationMessage[] {
  if (!history || history.length === 0) return [];
  const kept: ConversationMessage[] = [];
  for (const message of history) {
    if (message.role === 'summary') kept.splice(Math.max(0, kept.length - message.covers), message.covers);
    kept.push(message);
  }
  return kept;
}

/** The text of the last user message of a history; '' when there is none. */
export function lastUserText(history: readonly ConversationMessage[] | undefined): string {
  for (let i = (history?.length ?? 0) - 1; i >= 0; i--) {
    const message = history![i]!;
    if (message.role === 'user') return message.content;
  }
  return '';
}
