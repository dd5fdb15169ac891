import { createScriptedProvider, FlowingError, type LlmProvider } from '@flowing/runtime';

/**
 * The scripted provider offline; the OpenAI-compatible one when OPENAI_BASE_URL is set (it reads OPENAI_API_KEY and
 * FLOWING_MODEL itself).
 */
export async function chooseProvider(): Promise<LlmProvider> {
  if (!process.env.OPENAI_BASE_URL) return createScriptedProvider();
  const path = '@flowing/runtime/openai';
  let module: { createOpenAIProvider?: (options?: Record<string, unknown>) => LlmProvider };
  try {
    module = (await import(path)) as typeof module;
  } catch (error) {
    throw new FlowingError(
      'LLM_NOT_CONFIGURED',
      `OPENAI_BASE_URL is set, but the OpenAI provider could not be loaded: ${(error as Error).message}`,
    );
  }
  if (typeof module.createOpenAIProvider !== 'function') {
    throw new FlowingError('LLM_NOT_CONFIGURED', '@flowing/runtime/openai does not export createOpenAIProvider');
  }
  return module.createOpenAIProvider({});
}
