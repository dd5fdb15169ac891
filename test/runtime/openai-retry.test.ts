import { describe, expect, it } from 'vitest';
import { FlowingError } from '../../runtime/errors.ts';
import { retryAfterMs } from '../../runtime/llm/openai/chat.ts';
import { createOpenAIProvider, type OpenAIProviderOptions } from '../../runtime/llm/openai.ts';
import type { ClassifyRequest, GenerateRequest, LlmCallOptions } from '../../runtime/llm/types.ts';
import { httpError, reply, streamed } from '../helpers/fake-openai.ts';
import { useFakeOpenAI } from '../helpers/use-fake-openai.ts';

const fake = useFakeOpenAI();

const provider = (options: OpenAIProviderOptions = {}) =>
  createOpenAIProvider({
    baseURL: fake().baseURL,
    apiKey: 'test-key',
    model: 'fake-default',
    timeoutMs: 2_000,
    retryBaseMs: 20,
    random: () => 0.5,
    ...options,
  });
const classify: ClassifyRequest = { kind: 'classify', text: 'where is my parcel', labels: ['order_query', 'other'] };
const generate: GenerateRequest = { kind: 'generate', prompt: 'Say hello' };

function recordRetries(): { retries: Array<Parameters<NonNullable<LlmCallOptions['onRetry']>>[0]>; options: LlmCallOptions } {
  const retries: Array<Parameters<NonNullable<LlmCallOptions['onRetry']>>[0]> = [];
  return { retries, options: { signal: new AbortController().signal, onRetry: (r) => retries.push(r) } };
}

async function failure(promise: Promise<unknown>): Promise<FlowingError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FlowingError);
  return error as FlowingError;
}

describe('model requests are retried after transient failures', () => {
  it('waits the Retry-After of a 429, then takes the 200', async () => {
    fake().enqueue(
      httpError(429, 'slow down', { 'retry-after': '1' }),
      reply('{"label":"order_query"}', { usage: { prompt: 9, completion: 3 } }),
    );
    const { retries, options } = recordRetries();
    const result = await provider().classify(classify, options);
    expect(result.output).toEqual({ label: 'order_query' });
    expect(result.attempts).toBe(2);
    expect(fake().requests).toHaveLength(2);
    expect(retries).toEqual([{ attempt: 2, delayMs: 1_000, error: { code: 'LLM_RATE_LIMITED', message: expect.stringContaining('429') } }]);
    // The provider's wait, not the 20 ms backoff.
    expect(fake().requests[1]!.at - fake().requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('retries 500s with a growing backoff until the cap, then fails with the last error', async () => {
    fake().enqueue(httpError(500, 'boom 1'), httpError(502, 'boom 2'), httpError(503, 'boom 3'));
    const { retries, options } = recordRetries();
    const error = await failure(provider({ retries: 2 }).generate(generate, options));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain('boom 3');
    expect(error.details).toMatchObject({ status: 503, attempts: 3 });
    expect(fake().requests).toHaveLength(3);
    // base 20 ms doubled per retry, times the jitter factor 0.75 (random 0.5).
    expect(retries.map((r) => [r.attempt, r.delayMs])).toEqual([
      [2, 15],
      [3, 30],
    ]);
  });

  it('does not retry a 400: the request itself is wrong', async () => {
    fake().enqueue(httpError(400, 'bad request'));
    const { retries, options } = recordRetries();
    const error = await failure(provider().generate(generate, options));
    expect(error.details).toMatchObject({ status: 400, attempts: 1 });
    expect(retries).toEqual([]);
  });

  it('fails at once when the Retry-After is longer than it waits for', async () => {
    fake().enqueue(httpError(429, 'come back tomorrow', { 'retry-after': '86400' }));
    const { retries, options } = recordRetries();
    const error = await failure(provider().classify(classify, options));
    expect(error.code).toBe('LLM_RATE_LIMITED');
    expect(retries).toEqual([]);
  });

  it('retries a stream cut before any text reached the caller', async () => {
    fake().enqueue(streamed(['Hello', ' there'], { cutAfterChunks: 0 }), streamed(['Hello', ' there']));
    const deltas: string[] = [];
    const { retries, options } = recordRetries();
    const result = await provider().generate(generate, { ...options, onDelta: (d) => deltas.push(d) });
    expect(result.output.text).toBe('Hello there');
    expect(deltas).toEqual(['Hello', ' there']);
    expect(retries).toHaveLength(1);
  });

  it('never retries a stream cut after text reached the caller: the user would read it twice', async () => {
    fake().enqueue(streamed(['Hello', ' there', ' and more'], { cutAfterChunks: 2 }));
    const deltas: string[] = [];
    const { retries, options } = recordRetries();
    const error = await failure(provider().generate(generate, { ...options, onDelta: (d) => deltas.push(d) }));
    expect(error.code).toBe('LLM_FAILED');
    expect(deltas).toEqual(['Hello', ' there']);
    expect(retries).toEqual([]);
    expect(fake().requests).toHaveLength(1);
  });

  it('reads Retry-After as seconds, as an HTTP date and as retry-after-ms', () => {
    expect(retryAfterMs('2', 0)).toBe(2_000);
    expect(retryAfterMs('1500ms', 0)).toBe(1_500);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs('soon', 0)).toBeUndefined();
  });
});

describe('sampling settings', () => {
  it('sends temperature and top_p with every request of the call', async () => {
    fake().enqueue(reply('{"label":"nope"}'), reply('{"label":"other"}'));
    await provider().classify({ ...classify, temperature: 0.2, topP: 0.9, maxTokens: 64 }, { signal: new AbortController().signal });
    for (const request of fake().requests) expect(request.body).toMatchObject({ temperature: 0.2, top_p: 0.9, max_completion_tokens: 64 });
  });

  it('leaves them out when the spec sets none', async () => {
    fake().enqueue(reply('{"label":"other"}'));
    await provider().classify(classify, { signal: new AbortController().signal });
    expect(fake().requests[0]!.body).not.toHaveProperty('temperature');
    expect(fake().requests[0]!.body).not.toHaveProperty('top_p');
    expect(fake().requests[0]!.body).not.toHaveProperty('max_completion_tokens');
  });
});
