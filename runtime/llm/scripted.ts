import { fieldMapToZod, type ConversationMessage } from '@flowing/spec';
import { FlowingError } from '../errors.ts';
import { lastUserText } from './history.ts';
import { fillFields } from './scripted-fill.ts';
import type { AgentOutput, ClassifyOutput, ExtractOutput, GenerateOutput, LlmCallOptions, LlmProvider, LlmResult } from './types.ts';

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
 * The offline stand-in for a model: keyword rules for classify, regular expressions and keywords (see `fillFields`)
 * for extract and an agent's structured output, templated replies for generate and agent text. Deterministic, free, and honestly not a model (`isModel: false`).
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
      const output = fillFields(request.fields, ownText(request.text, request.history), request.scripted);
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
      const prompt = ownText(request.prompt, request.history);
      const text = request.output ? '' : (request.scripted?.reply ?? prompt);
      for (let i = 0; i < text.length; i += chunkSize) {
        throwIfAborted(signal);
        onDelta?.(text.slice(i, i + chunkSize));
      }
      throwIfAborted(signal);
      // With a history, the call's new messages: its prompt (when it has one) and its answer; it calls no tools.
      const messages = (answer: string): { messages?: ConversationMessage[] } =>
        request.history
          ? {
              messages: [
                ...(request.prompt === '' ? [] : [{ role: 'user' as const, content: request.prompt }]),
                { role: 'assistant', content: answer },
              ],
            }
          : {};
      if (!request.output) return result({ text, steps: 1, ...messages(text) });
      const output = fillFields(request.output, prompt, request.scripted);
      const json = JSON.stringify(output);
      return result({ text: json, steps: 1, output, ...messages(json) });
    },
  };
}
