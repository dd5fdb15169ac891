import type { ConversationMessage } from '@flowing/spec';

type Messages = readonly ConversationMessage[];

/** The index of the turn that holds message `at`: its user message, or 0 before the first one. */
function turnStartOf(messages: Messages, at: number): number {
  for (let i = at; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return 0;
}

/** Where each tool call was asked for: call id -> index of its assistant message (the first, should an id repeat). */
function callIndex(messages: Messages): Map<string, number> {
  const at = new Map<string, number>();
  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    for (const call of message.toolCalls ?? []) if (!at.has(call.id)) at.set(call.id, i);
  });
  return at;
}

/**
 * The earliest cut at or before `cut` that keeps every tool result after it with its call: a result whose call lies
 * before the cut pulls the cut back to the start of that call's turn. Results always follow their call, so the other
 * half (every kept call keeps its results) holds for any suffix.
 */
export function pairSafeCut(messages: Messages, cut: number, calls: Map<string, number> = callIndex(messages)): number {
  for (;;) {
    let need = cut;
    for (let i = cut; i < messages.length; i++) {
      const message = messages[i]!;
      if (message.role !== 'tool') continue;
      const callAt = calls.get(message.toolCallId);
      if (callAt !== undefined && callAt < need) need = callAt;
    }
    if (need === cut) return cut;
    cut = turnStartOf(messages, need);
  }
}

/**
 * Where the last `window` turns begin (a turn starts at a user message; anything before the first user message
 * belongs to the first turn), moved back so no tool call is split from its results.
 */
export function windowStart(messages: Messages, window: number): number {
  let turns = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user' && ++turns === window) return pairSafeCut(messages, i);
  }
  return 0;
}

/**
 * The next cut after `cut` that drops at least one whole turn and splits no tool pair, or undefined when the
 * messages from `cut` on are one turn that cannot be divided.
 */
export function nextTurnCut(messages: Messages, cut: number): number | undefined {
  const calls = callIndex(messages);
  for (let i = cut + 1; i < messages.length; i++) {
    if (messages[i]!.role !== 'user') continue;
    const safe = pairSafeCut(messages, i, calls);
    if (safe > cut) return safe;
  }
  return undefined;
}

/**
 * The last `window` turns of a conversation, verbatim; a tool call is never separated from its results (the window
 * grows back to the call's turn instead).
 * @example trimToWindow(history, 8)
 */
export function trimToWindow(messages: Messages, window: number): ConversationMessage[] {
  return messages.slice(windowStart(messages, window));
}
