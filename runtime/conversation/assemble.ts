import type { ConversationMessage, MemorySpec } from '@flowing/spec';
import { FlowingError } from '../errors.ts';
import { messagesTokens, type TokenCounter } from './tokens.ts';
import { nextTurnCut, windowStart } from './window.ts';

type SummaryMessage = Extract<ConversationMessage, { role: 'summary' }>;

/** What the assembled prompt must fit. */
export interface PromptBudget {
  counter: TokenCounter;
  /** Tokens the whole prompt may take; no limit when absent. */
  maxTokens?: number;
  /** Tokens of the rest of the prompt (system text, the call's own prompt) that the conversation shares the limit with. */
  fixedTokens?: number;
}

/** The messages a model call is sent of its conversation, and what was left out. */
export interface AssembledPrompt {
  messages: ConversationMessage[];
  /** Estimated tokens of the messages plus the fixed part. */
  tokens: number;
  /** How the tokens were counted. */
  counter: TokenCounter['name'];
  /** Turns left out to fit the token limit (beyond those outside the window). */
  droppedTurns: number;
  /** Messages of the conversation not sent verbatim (summarised, outside the window, or dropped). */
  omitted: number;
}

/** The latest summary of a conversation and its index, if it has one. */
export function latestSummary(history: readonly ConversationMessage[]): { summary: SummaryMessage; at: number } | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    if (message.role === 'summary') return { summary: message, at: i };
  }
  return undefined;
}

/**
 * The messages not folded into the latest summary, without summaries: a summary stands for the first `covers`
 * messages of the list (its predecessors' facts included), so what the window may send starts there.
 */
export function unsummarised(history: readonly ConversationMessage[]): { messages: ConversationMessage[]; from: number } {
  const from = Math.min(latestSummary(history)?.summary.covers ?? 0, history.length);
  return { messages: history.slice(from).filter((m) => m.role !== 'summary'), from };
}

/**
 * The prompt's share of a conversation: its latest summary, then the messages after what it covers (all of them
 * when the call summarises, else the last `window` turns); while the estimate passes the budget, the oldest whole
 * turn goes (never a tool call without its results). Refuses with LLM_PROMPT_TOO_LARGE when even the last turn does
 * not fit.
 * @example assemblePrompt(history, { window: 8 }, { counter: await loadTokenCounter(), maxTokens: 4000 })
 */
export function assemblePrompt(
  history: readonly ConversationMessage[],
  memory: Pick<MemorySpec, 'window' | 'summarize'>,
  budget: PromptBudget,
): AssembledPrompt {
  const head = latestSummary(history)?.summary;
  const live = unsummarised(history).messages;
  const fixed = (budget.fixedTokens ?? 0) + (head ? messagesTokens(budget.counter, [head]) : 0);
  // With summaries, turns leave the prompt only by being folded into one: nothing is lost between two summaries.
  let cut = memory.summarize ? 0 : windowStart(live, memory.window);
  let droppedTurns = 0;
  let tokens = fixed + messagesTokens(budget.counter, live.slice(cut));
  while (budget.maxTokens !== undefined && tokens > budget.maxTokens) {
    const next = nextTurnCut(live, cut);
    if (next === undefined) {
      throw new FlowingError(
        'LLM_PROMPT_TOO_LARGE',
        `the prompt takes about ${tokens} tokens (${budget.counter.name}) with only the conversation's last turn, over its limit of ${budget.maxTokens}; raise memory.maxPromptTokens or shorten the prompt`,
        { details: { tokens, limit: budget.maxTokens, counter: budget.counter.name } },
      );
    }
    tokens = fixed + messagesTokens(budget.counter, live.slice(next));
    cut = next;
    droppedTurns++;
  }
  const messages = head ? [head, ...live.slice(cut)] : live.slice(cut);
  const sentVerbatim = live.length - cut;
  return {
    messages,
    tokens,
    counter: budget.counter.name,
    droppedTurns,
    omitted: history.filter((m) => m.role !== 'summary').length - sentVerbatim,
  };
}
