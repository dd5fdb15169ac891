import { fieldMapToZod } from '@flowing/spec';
import { FlowingError } from '../errors.ts';
import type { AgentOutput, ClassifyOutput, ExtractOutput, GenerateOutput, LlmCallOptions, LlmProvider, LlmResult } from './types.ts';

const NO_USAGE = { promptTokens: 0, completionTokens: 0 };

function result<T>(output: T): LlmResult<T> {
  return { output, model: 'scripted', usage: NO_USAGE, attempts: 1 };
}

function throwIfAborted(signal: AbortSignal) {
  if (signal.aborted) throw new FlowingError('CANCELLED', 'the call was aborted');
}

/**
 * The offline stand-in for a model: keyword rules for classify, regular expressions for extract, templated
 * replies for generate. Deterministic, free, and honestly not a model (`isModel: false`).
 * @example createRuntime({ machines, llm: createScriptedProvider() })
 */
export function createScriptedProvider(options: { chunkSize?: number } = {}): LlmProvider {
  const chunkSize = options.chunkSize ?? 16;
  return {
    name: 'scripted',
    isModel: false,
    async classify(request, { signal }): Promise<LlmResult<ClassifyOutput>> {
      throwIfAborted(signal);
      const text = request.text.toLowerCase();
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
      const output: Record<string, unknown> = {};
      for (const [field, type] of Object.entries(request.fields)) {
        const source = request.scripted?.patterns?.[field];
        if (!source) continue;
        const match = new RegExp(source, 'i').exec(request.text);
        if (!match) continue;
        const raw = match[1] ?? match[0];
        output[field] = type.type === 'number' ? Number(raw) : type.type === 'boolean' ? /^(true|yes)$/i.test(raw) : raw;
      }
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
      const text = request.scripted?.reply ?? request.prompt;
      for (let i = 0; i < text.length; i += chunkSize) {
        throwIfAborted(signal);
        onDelta?.(text.slice(i, i + chunkSize));
      }
      throwIfAborted(signal);
      return result({ text });
    },
    async agent(request, { signal }): Promise<LlmResult<AgentOutput>> {
      throwIfAborted(signal);
      return result({ text: request.scripted?.reply ?? request.prompt, steps: 1 });
    },
  };
}
