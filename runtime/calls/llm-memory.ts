import type { Conversation, MemorySpec } from '@flowing/spec';
import { assemblePrompt, type AssembledPrompt } from '../conversation/assemble.ts';
import { summaryDue, summaryMessage, summaryRequest, type SummaryMessage } from '../conversation/summary.ts';
import { loadTokenCounter } from '../conversation/tokens.ts';
import type { ExtractRequest, LlmRequest } from '../llm/types.ts';

/** What memory made of a call's conversation. */
export interface MemoryOutcome {
  /** The messages the call sends: the latest summary, then the window's turns within the token limit. */
  history: Conversation;
  /** The summary made before this call, to append to the conversation. */
  summary?: SummaryMessage;
  prompt: AssembledPrompt;
}

/** The model call that makes a summary (a journaled, logged extract under its own key). */
export type Summarize = (request: ExtractRequest) => Promise<unknown>;

/** The text of a request that shares the prompt's token limit with the conversation. */
function fixedText(request: LlmRequest): string {
  const own = 'prompt' in request && request.prompt ? request.prompt : 'text' in request ? request.text : '';
  return `${request.system ?? ''}\n${own}`;
}

/**
 * A call's memory over its conversation: a summary first when one is due (folded by `summarize`, so it is logged,
 * recorded and replayed like any model call), then the prompt's share of the conversation within the window and
 * within `maxPromptTokens` (else the call's `maxTokens`).
 */
export async function applyMemory(
  request: LlmRequest,
  history: Conversation,
  memory: MemorySpec,
  summarize: Summarize,
): Promise<MemoryOutcome> {
  let summary: SummaryMessage | undefined;
  const plan = summaryDue(history, memory);
  if (plan) {
    const base = {
      ...(request.model !== undefined ? { model: request.model } : {}),
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
    };
    const output = (await summarize(summaryRequest(plan, memory, base))) as Record<string, unknown>;
    summary = summaryMessage(output, plan.covers);
  }
  const counter = await loadTokenCounter();
  const limit = memory.maxPromptTokens ?? request.maxTokens;
  const prompt = assemblePrompt(summary ? [...history, summary] : history, memory, {
    counter,
    fixedTokens: counter.count(fixedText(request)),
    ...(limit !== undefined ? { maxTokens: limit } : {}),
  });
  return { history: prompt.messages, ...(summary ? { summary } : {}), prompt };
}
