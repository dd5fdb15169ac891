import { APIError, InternalServerError, RateLimitError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FlowingError } from '../../runtime/errors.ts';
import { createOpenAIProvider, type OpenAIProviderOptions } from '../../runtime/llm/openai.ts';
import type { ClassifyRequest, ExtractRequest, GenerateRequest } from '../../runtime/llm/types.ts';
import { httpError, reply, stall, startFakeOpenAI, streamed, type FakeOpenAI } from '../helpers/fake-openai.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  // Every scripted turn must have been used by the test that queued it.
  expect(fake.pending()).toBe(0);
  fake.requests.length = 0;
});

const provider = (options: OpenAIProviderOptions = {}) =>
  createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'test-key', model: 'fake-default', timeoutMs: 2_000, ...options });
const live = () => ({ signal: new AbortController().signal });

async function failure(promise: Promise<unknown>): Promise<FlowingError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FlowingError);
  return error as FlowingError;
}

const classify: ClassifyRequest = {
  kind: 'classify',
  text: 'I want my money back for order A1001',
  labels: ['order_query', 'refund', 'other'],
};
const extract: ExtractRequest = {
  kind: 'extract',
  text: 'order A1001, email ann@example.com',
  fields: { order_id: { type: 'string' }, quantity: { type: 'number', optional: true } },
};
const generate: GenerateRequest = { kind: 'generate', prompt: 'Say hello', system: 'Be brief.' };

describe('classify', () => {
  it('returns the label the model picks, asking for a JSON object', async () => {
    fake.enqueue(reply('{"label": "refund"}', { usage: { prompt: 40, completion: 6 } }));
    const result = await provider().classify(classify, live());
    expect(result).toEqual({
      output: { label: 'refund' },
      model: 'fake-default',
      usage: { promptTokens: 40, completionTokens: 6 },
      attempts: 1,
      finishReason: 'stop',
    });
    const body = fake.requests[0]!.body;
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(String(body.messages[0]!.content)).toContain('"order_query", "refund", "other"');
    expect(body.messages[1]).toEqual({ role: 'user', content: classify.text });
  });

  it('feeds an invalid label back and sums usage over the repair', async () => {
    fake.enqueue(
      reply('{"label": "refunds"}', { usage: { prompt: 40, completion: 6 } }),
      reply('{"label": "refund"}', { usage: { prompt: 70, completion: 6 } }),
    );
    const result = await provider().classify(classify, live());
    expect(result.output.label).toBe('refund');
    expect(result.attempts).toBe(2);
    expect(result.usage).toEqual({ promptTokens: 110, completionTokens: 12 });
    const repair = fake.requests[1]!.body.messages;
    expect(repair.at(-2)).toEqual({ role: 'assistant', content: '{"label": "refunds"}' });
    expect(repair.at(-1)!.role).toBe('user');
    expect(String(repair.at(-1)!.content)).toContain('"refunds" is not one of the labels');
  });

  it('stops after 2 repairs (3 requests) with LLM_BAD_OUTPUT', async () => {
    fake.enqueue(reply('{"label": "x"}'), reply('not json at all'), reply('{"category": "refund"}'));
    const error = await failure(provider().classify(classify, live()));
    expect(error.code).toBe('LLM_BAD_OUTPUT');
    expect(fake.requests).toHaveLength(3);
    expect(error.details).toMatchObject({
      attempts: 3,
      usage: { promptTokens: 30, completionTokens: 15 },
      problem: 'the JSON object has no string "label"',
    });
    expect(String(fake.requests[2]!.body.messages.at(-1)!.content)).toContain('"not json at all" is not one of the labels');
  });
});

describe('extract', () => {
  it('fills the fields from a fenced JSON answer, dropping null optional fields', async () => {
    fake.enqueue(reply('```json\n{"order_id": "A1001", "quantity": null}\n```'));
    const result = await provider({ models: { extract: 'fake-extractor' } }).extract(extract, live());
    expect(result.output).toEqual({ order_id: 'A1001' });
    expect(result.model).toBe('fake-extractor');
    expect(fake.requests[0]!.body.model).toBe('fake-extractor');
    expect(String(fake.requests[0]!.body.messages[0]!.content)).toContain('"required":["order_id"]');
  });

  it('feeds the zod issues back and accepts the repaired answer', async () => {
    fake.enqueue(reply('{"quantity": "two"}'), reply('{"order_id": "A1001", "quantity": 2}'));
    const result = await provider().extract(extract, live());
    expect(result.output).toEqual({ order_id: 'A1001', quantity: 2 });
    expect(result.attempts).toBe(2);
    const feedback = String(fake.requests[1]!.body.messages.at(-1)!.content);
    expect(feedback).toContain('order_id:');
    expect(feedback).toContain('quantity:');
  });

  it('stops after 2 repairs with LLM_BAD_OUTPUT carrying the last zod issues', async () => {
    fake.enqueue(reply('{}'), reply('{"order_id": 5}'), reply('{"order_id": "A1", "extra": true}'));
    const error = await failure(provider().extract(extract, live()));
    expect(error.code).toBe('LLM_BAD_OUTPUT');
    expect(fake.requests).toHaveLength(3);
    expect((error.details as { issues: Array<{ path: string }> }).issues).toEqual([expect.objectContaining({ path: '' })]);
    expect(String((error.details as { problem: string }).problem)).toContain('extra');
  });
});

describe('generate', () => {
  it('streams the deltas in order and reports the usage of the final chunk', async () => {
    fake.enqueue(streamed(['Hel', 'lo', ', ', 'world'], { usage: { prompt: 12, completion: 4 } }));
    const deltas: string[] = [];
    const result = await provider({ models: { generate: 'fake-writer' } }).generate(generate, {
      ...live(),
      onDelta: (d) => deltas.push(d),
    });
    expect(deltas).toEqual(['Hel', 'lo', ', ', 'world']);
    expect(result).toEqual({
      output: { text: 'Hello, world' },
      model: 'fake-writer',
      usage: { promptTokens: 12, completionTokens: 4 },
      attempts: 1,
      finishReason: 'stop',
    });
    const body = fake.requests[0]!.body;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
  });

  it('cuts a stream that stalls after its first chunk with LLM_TIMEOUT', async () => {
    fake.enqueue(streamed(['first', 'never sent'], { stallAfterChunks: 1 }));
    const deltas: string[] = [];
    const error = await failure(provider().generate(generate, { ...live(), timeoutMs: 300, onDelta: (d) => deltas.push(d) }));
    expect(error.code).toBe('LLM_TIMEOUT');
    expect(error.details).toMatchObject({ timeoutMs: 300, attempts: 1 });
    expect(deltas).toEqual(['first']);
    await vi.waitFor(() => expect(fake.requests[0]!.clientClosed).toBe(true));
  });

  it('cuts a request whose answer never starts with LLM_TIMEOUT', async () => {
    fake.enqueue(stall());
    const error = await failure(provider({ retries: 0 }).generate(generate, { ...live(), timeoutMs: 300 }));
    expect(error.code).toBe('LLM_TIMEOUT');
    await vi.waitFor(() => expect(fake.requests[0]!.clientClosed).toBe(true));
  });

  it('stops the deltas within 100 ms of an abort and fails with CANCELLED', async () => {
    const chunks = Array.from({ length: 60 }, (_, i) => `c${i} `);
    fake.enqueue(streamed(chunks, { intervalMs: 20 }));
    const controller = new AbortController();
    let abortedAt = 0;
    const late: number[] = [];
    const deltas: string[] = [];
    const call = provider().generate(generate, {
      signal: controller.signal,
      onDelta: (delta) => {
        deltas.push(delta);
        if (abortedAt) late.push(performance.now() - abortedAt);
        if (deltas.length === 3) {
          abortedAt = performance.now();
          controller.abort(new Error('user left'));
        }
      },
    });
    const error = await failure(call);
    const settledAfter = performance.now() - abortedAt;
    expect(error.code).toBe('CANCELLED');
    expect(late).toEqual([]);
    expect(settledAfter).toBeLessThan(100);
    // Let chunks keep arriving, were the stream still open: none may be delivered.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(deltas).toHaveLength(3);
    await vi.waitFor(() => expect(fake.requests[0]!.clientClosed).toBe(true));
    expect(fake.requests[0]!.chunksSent).toBeLessThan(chunks.length);
  });
});

describe('errors at the SDK boundary (retries off)', () => {
  const provider = (options: OpenAIProviderOptions = {}) =>
    createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'test-key', model: 'fake-default', timeoutMs: 2_000, retries: 0, ...options });
  it('maps a 429 to LLM_RATE_LIMITED with the SDK error as cause', async () => {
    fake.enqueue(httpError(429, 'slow down', { 'retry-after': '7' }));
    const error = await failure(provider().classify(classify, live()));
    expect(error.code).toBe('LLM_RATE_LIMITED');
    expect(error.cause).toBeInstanceOf(RateLimitError);
    expect(error.details).toEqual({
      status: 429,
      retryAfter: '7',
      model: 'fake-default',
      attempts: 1,
      usage: { promptTokens: 0, completionTokens: 0 },
    });
    expect(fake.requests).toHaveLength(1);
  });

  it('maps a 500 to LLM_FAILED with the SDK error as cause', async () => {
    fake.enqueue(httpError(500, 'boom'));
    const error = await failure(provider().generate(generate, live()));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.cause).toBeInstanceOf(InternalServerError);
    expect(error.message).toContain('boom');
    expect(fake.requests).toHaveLength(1);
  });

  it('maps another 4xx to LLM_FAILED with its status', async () => {
    fake.enqueue(httpError(404, 'no such model'));
    const error = await failure(provider().extract(extract, live()));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.cause).toBeInstanceOf(APIError);
    expect(error.details).toMatchObject({ status: 404, attempts: 1 });
  });

  it('keeps the usage of earlier repair attempts on a later failure', async () => {
    fake.enqueue(reply('{"label": "nope"}', { usage: { prompt: 40, completion: 6 } }), httpError(503, 'overloaded'));
    const error = await failure(provider().classify(classify, live()));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.details).toEqual({ status: 503, model: 'fake-default', attempts: 2, usage: { promptTokens: 40, completionTokens: 6 } });
  });

  it('maps an unreachable server to LLM_FAILED', async () => {
    const closed = await startFakeOpenAI();
    await closed.close();
    const error = await failure(createOpenAIProvider({ baseURL: closed.baseURL, apiKey: 'k', model: 'm' }).classify(classify, live()));
    expect(error.code).toBe('LLM_FAILED');
  });

  it('refuses an already aborted call with CANCELLED without sending a request', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failure(provider().classify(classify, { signal: controller.signal }));
    expect(error.code).toBe('CANCELLED');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('configuration', () => {
  it('takes the request model first, then models[kind], then model', async () => {
    fake.enqueue(reply('{"label":"refund"}'), reply('{"label":"refund"}'), reply('{"label":"refund"}'));
    const p = provider({ models: { classify: 'cheap' } });
    await p.classify({ ...classify, model: 'from-spec' }, live());
    await p.classify(classify, live());
    await provider().classify(classify, live());
    expect(fake.requests.map((r) => r.body.model)).toEqual(['from-spec', 'cheap', 'fake-default']);
  });

  it('reads OPENAI_BASE_URL, OPENAI_API_KEY and FLOWING_MODEL when no options are given', async () => {
    vi.stubEnv('OPENAI_BASE_URL', fake.baseURL);
    vi.stubEnv('OPENAI_API_KEY', 'env-key');
    vi.stubEnv('FLOWING_MODEL', 'env-model');
    try {
      fake.enqueue(reply('{"label":"other"}'));
      const result = await createOpenAIProvider().classify(classify, live());
      expect(result.model).toBe('env-model');
      expect(fake.requests[0]!.body.model).toBe('env-model');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("uses FLOWING_MODEL for every call, over the spec's per-step model, unless modelOverride is null", async () => {
    vi.stubEnv('FLOWING_MODEL', 'deployment-model');
    try {
      fake.enqueue(reply('{"label":"refund"}'), reply('{"label":"refund"}'), reply('{"label":"refund"}'), reply('{"label":"refund"}'));
      const p = provider({ models: { classify: 'cheap' } });
      await p.classify({ ...classify, model: 'from-spec' }, live());
      await p.classify(classify, live());
      await provider({ modelOverride: 'explicit' }).classify({ ...classify, model: 'from-spec' }, live());
      await provider({ modelOverride: null }).classify({ ...classify, model: 'from-spec' }, live());
      expect(fake.requests.map((r) => r.body.model)).toEqual(['deployment-model', 'deployment-model', 'explicit', 'from-spec']);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('fails a call with LLM_NOT_CONFIGURED when no model is named anywhere', async () => {
    vi.stubEnv('FLOWING_MODEL', '');
    try {
      const error = await failure(createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'k' }).classify(classify, live()));
      expect(error.code).toBe('LLM_NOT_CONFIGURED');
      expect(fake.requests).toHaveLength(0);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('is labelled as a real model', () => {
    expect(provider()).toMatchObject({ name: 'openai', isModel: true });
  });
});
