import type { LlmProvider, LlmRequest, LlmResult } from '@flowing/runtime';

const NO_USAGE = { promptTokens: 0, completionTokens: 0 };

function answer<T>(output: T): LlmResult<T> {
  return { output, model: 'bench', usage: NO_USAGE, attempts: 1 };
}

/**
 * The model every benchmark case calls: the scripted rules of the spec (keywords for classify, patterns for extract,
 * the fixed reply for generate) in a few lines of plain code, answered at once. It stands for the model API, so the
 * baseline and the runtime call the very same function and neither path measures a Flowing provider.
 */
export const benchModel = {
  classify(request: Extract<LlmRequest, { kind: 'classify' }>): { label: string } {
    const text = request.text.toLowerCase();
    for (const label of request.labels) {
      if ((request.scripted?.keywords?.[label] ?? []).some((word) => text.includes(word))) return { label };
    }
    return { label: request.labels[request.labels.length - 1]! };
  },
  extract(request: Extract<LlmRequest, { kind: 'extract' }>): Record<string, unknown> {
    const output: Record<string, unknown> = {};
    for (const [field, pattern] of Object.entries(request.scripted?.patterns ?? {})) {
      const match = new RegExp(pattern).exec(request.text);
      if (match) output[field] = match[1] ?? match[0];
    }
    return output;
  },
  generate(request: Extract<LlmRequest, { kind: 'generate' }>): { text: string } {
    return { text: request.scripted?.reply ?? request.prompt };
  },
};

/** `benchModel` behind the runtime's provider interface (generate streams its text as one delta). */
export function benchProvider(): LlmProvider {
  return {
    name: 'bench',
    isModel: false,
    async classify(request) {
      return answer(benchModel.classify(request));
    },
    async extract(request) {
      return answer(benchModel.extract(request));
    },
    async generate(request, { onDelta }) {
      const output = benchModel.generate(request);
      onDelta?.(output.text);
      return answer(output);
    },
    async agent() {
      throw new Error('the benchmark workload makes no agent calls');
    },
  };
}
