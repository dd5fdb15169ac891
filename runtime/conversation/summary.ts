import { memoryFacts, SUMMARY_CONTENT_FIELD, type ConversationMessage, type FieldMap, type MemorySpec } from '@flowing/spec';
import type { ExtractRequest } from '../llm/types.ts';
import { latestSummary } from './assemble.ts';
import { pairSafeCut, windowStart } from './window.ts';

export type SummaryMessage = Extract<ConversationMessage, { role: 'summary' }>;

/** A summary that is due: the messages it folds, the summary it rolls on from, and what it will cover. */
export interface SummaryPlan {
  /** Messages not yet summarised that leave the window, in order (earlier summaries left out). */
  fold: ConversationMessage[];
  previous?: SummaryMessage;
  /** The new summary's `covers`: the index where the messages sent verbatim begin. */
  covers: number;
}

/**
 * Whether a call must summarise first: more than `summarize.after` turns are not covered by the latest summary.
 * Everything before the window (cut so no tool call leaves its results) is then folded, with the previous summary,
 * so the next summary comes `after - window` turns later.
 */
export function summaryDue(history: readonly ConversationMessage[], memory: MemorySpec): SummaryPlan | undefined {
  const summarize = memory.summarize;
  if (summarize === undefined) return undefined;
  const latest = latestSummary(history);
  const from = Math.min(latest?.summary.covers ?? 0, history.length);
  const region = history.slice(from);
  const pending = region.reduce((n, m) => (m.role === 'user' ? n + 1 : n), 0);
  if (pending <= summarize.after) return undefined;
  const covers = pairSafeCut(history, from + windowStart(region, memory.window));
  if (covers <= from) return undefined;
  return {
    fold: history.slice(from, covers).filter((m) => m.role !== 'summary'),
    ...(latest ? { previous: latest.summary } : {}),
    covers,
  };
}

/** The fields a summary answers: the kept facts and its text. */
export function summaryFields(memory: MemorySpec): FieldMap {
  return { ...memoryFacts(memory), [SUMMARY_CONTENT_FIELD]: { type: 'string', description: 'What happened, in a few sentences.' } };
}

const SUMMARY_SYSTEM =
  'Summarise the earlier part of a conversation for the assistant who continues it. Keep every declared fact with its latest value ' +
  '(a fact the conversation never mentions is left out) and write a short account of what was asked, done and answered.';

/** The conversation as plain text for a summary: the previous summary first, then each message on its own line. */
export function transcriptText(plan: Pick<SummaryPlan, 'fold' | 'previous'>): string {
  const lines: string[] = [];
  if (plan.previous) {
    lines.push(`summary: ${plan.previous.content}`);
    for (const [fact, value] of Object.entries(plan.previous.facts)) lines.push(`fact ${fact}: ${JSON.stringify(value)}`);
  }
  for (const message of plan.fold) {
    switch (message.role) {
      case 'user':
        lines.push(`user: ${message.content}`);
        break;
      case 'assistant':
        if (message.content) lines.push(`assistant: ${message.content}`);
        for (const call of message.toolCalls ?? []) lines.push(`assistant called ${call.name} ${JSON.stringify(call.args ?? null)}`);
        break;
      case 'tool':
        lines.push(`tool ${message.name} ${message.ok ? 'returned' : 'failed'}: ${message.content}`);
        break;
      case 'summary':
        break;
    }
  }
  return lines.join('\n');
}

/**
 * The extract request that makes a summary: the kept facts and a text over the folded messages and the previous
 * summary, with the call's model and token limit. `summary` tells providers (the scripted one) what it is for.
 */
export function summaryRequest(plan: SummaryPlan, memory: MemorySpec, base: Pick<ExtractRequest, 'model' | 'maxTokens'>): ExtractRequest {
  return {
    kind: 'extract',
    text: transcriptText(plan),
    fields: summaryFields(memory),
    system: SUMMARY_SYSTEM,
    summary: { previousFacts: plan.previous?.facts ?? {}, covers: plan.covers },
    ...(memory.summarize?.scripted ? { scripted: memory.summarize.scripted } : {}),
    ...(base.model !== undefined ? { model: base.model } : {}),
    ...(base.maxTokens !== undefined ? { maxTokens: base.maxTokens } : {}),
  };
}

/** The summary message a summary call's answer becomes. */
export function summaryMessage(output: Record<string, unknown>, covers: number): SummaryMessage {
  const { [SUMMARY_CONTENT_FIELD]: content, ...facts } = output;
  return { role: 'summary', content: typeof content === 'string' ? content : '', facts, covers };
}
