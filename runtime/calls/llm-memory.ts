import type { Conversation, ConversationMessage, MemorySpec } from '@flowing/spec';
import { assemblePrompt, type AssembledPrompt } from '../conversation/assemble.ts';
import { summaryDue, summaryMessage, summaryRequest, type SummaryMessage } from '../conversation/summary.ts';
import { loadTokenCounter } from '../conversation/tokens.ts';
import { FlowingError, toFlowError, type FlowError } from '../errors.ts';
import type { ExtractRequest, LlmRequest } from '../llm/types.ts';
import type { CallContext } from './context.ts';

/** What memory made of a call's conversation. */
export interface MemoryOutcome {
  /** The messages the call sends: the latest summary, then the window's turns within the token limit. */
  history: Conversation;
  /** The summary made before this call, to append to the conversation. */
  summary?: SummaryMessage;
  /** The summary that was due could not be made: the call sends the plain window of recent turns instead. */
  summaryFailed?: FlowError;
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
  history: readonly ConversationMessage[],
  memory: MemorySpec,
  summarize: Summarize,
): Promise<MemoryOutcome> {
  let summary: SummaryMessage | undefined;
  let summaryFailed: FlowError | undefined;
  const plan = summaryDue(history, memory);
  if (plan) {
    const base = {
      ...(request.model !== undefined ? { model: request.model } : {}),
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
    };
    try {
      const output = (await summarize(summaryRequest(plan, memory, base))) as Record<string, unknown>;
      summary = summaryMessage(output, plan.covers);
    } catch (thrown) {
      // A summary is a help, not the task: without one the call still has the recent turns. A stopped call stops.
      const error = toFlowError(thrown, 'LLM_FAILED');
      if (error.code === 'CANCELLED') throw thrown;
      summaryFailed = { code: error.code, message: error.message };
    }
  }
  const counter = await loadTokenCounter();
  const limit = memory.maxPromptTokens ?? request.maxTokens;
  // Without the summary, the turns it would have folded are not all sent: the window is, as without `summarize`.
  const shape = summaryFailed ? { window: memory.window } : memory;
  const prompt = assemblePrompt(summary ? [...history, summary] : history, shape, {
    counter,
    fixedTokens: counter.count(fixedText(request)),
    ...(limit !== undefined ? { maxTokens: limit } : {}),
  });
  return { history: prompt.messages, ...(summary ? { summary } : {}), ...(summaryFailed ? { summaryFailed } : {}), prompt };
}

/** A request with memory applied to its history, and what to log and append. */
export interface Remembered {
  request: LlmRequest;
  summary?: SummaryMessage;
  /** For the call's `llm.started`: the prompt's estimated tokens, the counter (`chars/4` when no tokenizer loaded), what was left out. */
  prompt: { tokens: number; counter: string; messages: number; omitted: number; droppedTurns: number };
}

/**
 * Applies a call's memory before it is made: a summary due is made by `summarize` as a call of its own under the key
 * `<call key>/summary` (journaled and logged, so a resumed or replayed session never asks the model again). When it
 * fails, the call goes on with the plain window and `conversation.summary_failed` says so.
 */
export async function remember(
  call: CallContext,
  request: LlmRequest,
  history: readonly ConversationMessage[],
  memory: MemorySpec,
  summarize: (call: CallContext, request: ExtractRequest) => Promise<unknown>,
): Promise<Remembered> {
  const summaryKey = `${call.key}/summary`;
  const made = await applyMemory(request, history, memory, (summaryRequest) =>
    summarize(call.nested(summaryKey, call.deadline), summaryRequest),
  );
  if (made.summaryFailed) {
    if (call.deadline.isAborted) throw call.deadline.reason ?? new FlowingError('CANCELLED', `call ${call.key} was stopped`);
    call.emit('conversation.summary_failed', {
      callId: call.key,
      summaryCallId: summaryKey,
      error: made.summaryFailed,
      fallback: 'window',
      window: memory.window,
    });
  }
  const { tokens, counter, omitted, droppedTurns } = made.prompt;
  return {
    request: { ...request, history: made.history },
    ...(made.summary ? { summary: made.summary } : {}),
    prompt: { tokens, counter, messages: made.history.length, omitted, droppedTurns },
  };
}

/**
 * A call's result with the summary made before it at the head of its new messages, so the machine appends it to the
 * conversation where it was made (before this call's own messages). A result without messages gets them.
 */
export function withSummary<T extends { output: unknown }>(result: T, summary: SummaryMessage | undefined): T {
  if (!summary || result.output === null || typeof result.output !== 'object') return result;
  const output = result.output as { messages?: unknown };
  const messages = Array.isArray(output.messages) ? output.messages : [];
  // A replayed call answers with what it resolved with when recorded: the summary is already there.
  if (messages[0]?.role === 'summary' && JSON.stringify(messages[0]) === JSON.stringify(summary)) return result;
  return { ...result, output: { ...output, messages: [summary, ...messages] } };
}
