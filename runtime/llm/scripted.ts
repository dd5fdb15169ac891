import { fieldMapToZod, handoffToolName, type ConversationMessage } from '@flowing/spec';
import { FlowingError } from '../errors.ts';
import { lastUserText } from './history.ts';
import { fillFields } from './scripted-fill.ts';
import { scriptedSummary } from './scripted-summary.ts';
import type {
  AgentHandoff,
  AgentOutput,
  AgentRequest,
  ClassifyOutput,
  ExtractOutput,
  GenerateOutput,
  LlmCallOptions,
  LlmProvider,
  LlmResult,
} from './types.ts';

const NO_USAGE = { promptTokens: 0, completionTokens: 0 };

function result<T>(output: T): LlmResult<T> {
  return { output, model: 'scripted', usage: NO_USAGE, attempts: 1 };
}

/** A call's own text, or with none, the last user message of its history (what a real model would answer). */
function ownText(text: string, history: readonly ConversationMessage[] | undefined): string {
  return text === '' && history ? lastUserText(history) : text;
}

function throwIfAborted(signal: AbortSignal) {
  if (signal.aborted) throw new FlowingError('CANCELLED', 'the call was aborted');
}

/**
 * The handoff target whose `scripted.handoffs` keywords occur in the prompt (case-insensitive), first in the order of
 * `request.handoffs`. A target without keywords is never chosen offline.
 */
function scriptedHandoff(request: AgentRequest, prompt: string): AgentHandoff | undefined {
  const text = prompt.toLowerCase();
  for (const to of request.handoffs ?? []) {
    const hit = request.scripted?.handoffs?.[to]?.find((w) => w !== '' && text.includes(w.toLowerCase()));
    if (hit !== undefined) return { to, reason: `the message mentions '${hit}'`, message: prompt };
  }
  return undefined;
}

/**
 * The offline stand-in for a model: keyword rules for classify, regular expressions and keywords (see `fillFields`)
 * for extract and an agent's structured output, templated replies for generate and agent text, keyword
 * rules for an agent's handoffs. Deterministic, free, and honestly not a model (`isModel: false`).
 * @example createRuntime({ machines, llm: createScriptedProvider() })
 */
export function createScriptedProvider(options: { chunkSize?: number } = {}): LlmProvider {
  const chunkSize = options.chunkSize ?? 16;
  return {
    name: 'scripted',
    isModel: false,
    async classify(request, { signal }): Promise<LlmResult<ClassifyOutput>> {
      throwIfAborted(signal);
      const text = ownText(request.text, request.history).toLowerCase();
      for (const label of request.labels) {
        const words = request.scripted?.keywords?.[label] ?? [label.replace(/_/g, ' ')];
        if (words.some((w) => w !== '' && text.includes(w.toLowerCase()))) return result({ label });
      }
      const fallback = request.labels[request.labels.length - 1];
      if (fallback === undefined) throw new FlowingError('LLM_BAD_OUTPUT', 'classify was given no labels');
      return result({ label: fallback });
    },
    async extract(request, { signal }): Promise<LlmResult<ExtractOutput>> {
      throwIfAborted(signal);
      const output = request.summary
        ? scriptedSummary({ ...request, summary: request.summary })
        : fillFields(request.fields, ownText(request.text, request.history), request.scripted);
      const checked = fieldMapToZod(request.fields).safeParse(output);
      if (!checked.success) {
        throw new FlowingError(
          'LLM_BAD_OUTPUT',
          `scripted extraction did not fill the fields: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      }
      return result(checked.data as ExtractOutput);
    },
    async generate(request, { signal, onDelta }: LlmCallOptions): Promise<LlmResult<GenerateOutput>> {
      const text = request.scripted?.reply ?? ownText(request.prompt, request.history);
      for (let i = 0; i < text.length; i += chunkSize) {
        throwIfAborted(signal);
        onDelta?.(text.slice(i, i + chunkSize));
      }
      throwIfAborted(signal);
      return result({ text });
    },
    async agent(request, { signal, onDelta }): Promise<LlmResult<AgentOutput>> {
      throwIfAborted(signal);
      const prompt = ownText(request.prompt, request.history);
      // With a history, the call's new messages: its prompt (when it has one) and its answer; it calls no tools.
      const messages = (...answer: ConversationMessage[]): { messages?: ConversationMessage[] } =>
        request.history
          ? { messages: [...(request.prompt === '' ? [] : [{ role: 'user' as const, content: request.prompt }]), ...answer] }
          : {};
      const handoff = scriptedHandoff(request, prompt);
      if (handoff) {
        const id = `handoff-${handoff.to}`;
        const name = handoffToolName(handoff.to);
        return result({
          text: '',
          steps: 1,
          handoff,
          ...messages(
            { role: 'assistant', content: '', toolCalls: [{ id, name, args: handoff.reason ? { reason: handoff.reason } : {} }] },
            { role: 'tool', toolCallId: id, name, content: JSON.stringify({ handoff: handoff.to }), ok: true },
          ),
        });
      }
      const text = request.output ? '' : (request.scripted?.reply ?? prompt);
      for (let i = 0; i < text.length; i += chunkSize) {
        throwIfAborted(signal);
        onDelta?.(text.slice(i, i + chunkSize));
      }
      throwIfAborted(signal);
      if (!request.output) return result({ text, steps: 1, ...messages({ role: 'assistant', content: text }) });
      const output = fillFields(request.output, prompt, request.scripted);
      const json = JSON.stringify(output);
      return result({ text: json, steps: 1, output, ...messages({ role: 'assistant', content: json }) });
    },
  };
}
