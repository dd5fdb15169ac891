import OpenAI from 'openai';
import { systemClock } from '../clock.ts';
import { FlowingError } from '../errors.ts';
import { runAgentLoop } from './openai/agent.ts';
import { startCall, streamText, type ChatCall } from './openai/chat.ts';
import { chatMessages } from './openai/history.ts';
import { classifyWithRepair, extractWithRepair } from './openai/structured.ts';
import type { LlmCallOptions, LlmProvider, LlmRequest, LlmResult } from './types.ts';

/** Default wait for a model answer, and the longest silence allowed inside a stream. */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;

/** Options of the OpenAI-compatible provider; each falls back to an environment variable. */
export interface OpenAIProviderOptions {
  /** Default `OPENAI_BASE_URL`, else the SDK's api.openai.com. */
  baseURL?: string;
  /** Default `OPENAI_API_KEY`. A local server (`baseURL` set) may run without one. */
  apiKey?: string;
  /** Model for calls whose spec and `models` name none. */
  model?: string;
  /** Model per call kind, e.g. a cheap one for classify and a strong one for generate; `default` is like `model`. */
  models?: Partial<Record<LlmRequest['kind'] | 'default', string>>;
  /**
   * Model for every call, over the spec's per-step models. Default `FLOWING_MODEL`: the deployment knows which
   * server `OPENAI_BASE_URL` points at and which models it serves; a spec's model names are written for one provider.
   * Pass `null` to ignore the environment.
   */
  modelOverride?: string | null;
  /** Per model request: the wait for an answer and the longest silence inside a stream. Default 60 s. */
  timeoutMs?: number;
  /** A fetch to use instead of the global one (proxies, tests). */
  fetch?: typeof fetch;
  /**
   * Extra requests after a rate limit (429), a server error (5xx), a timeout or a cut connection; never after text
   * was streamed to the user. Default 2.
   */
  retries?: number;
  /** First retry delay when the provider sends no `Retry-After`; doubles per retry, with jitter. Default 500 ms. */
  retryBaseMs?: number;
  /** Cap of the backoff. Default 8 s. */
  retryMaxMs?: number;
  /** A `Retry-After` longer than this fails the call instead of waiting. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Random number in [0, 1) for the backoff's jitter. Default Math.random. */
  random?: () => number;
}

/** Model requests retried by default after a transient failure. */
export const DEFAULT_LLM_RETRIES = 2;

/**
 * A model provider for OpenAI and OpenAI-compatible servers (Ollama, vLLM, ...) through the `openai` SDK: classify and
 * extract ask for JSON and repair invalid answers at most twice, generate streams, agent runs a bounded tool loop
 * (streamed when the caller takes deltas, its tool calls of one turn run together). A request failing with a 429, a
 * 5xx, a timeout or a cut connection is made again (`retries`), after the provider's `Retry-After` or a backoff with
 * jitter, unless text already reached the caller.
 * Failures are FlowingErrors coded LLM_TIMEOUT, LLM_RATE_LIMITED, LLM_FAILED, LLM_BAD_OUTPUT or CANCELLED, with the
 * SDK error as `cause` and `details` holding the model, attempts and usage so far. The model of a call is
 * `modelOverride` (default `FLOWING_MODEL`) when set, else the request's `model` (the spec's, per step), else
 * `models[kind]`, else `model`.
 * @example createRuntime({ machines, llm: createOpenAIProvider({ models: { classify: 'gpt-4o-mini', generate: 'gpt-4o' } }) })
 */
export function createOpenAIProvider(options: OpenAIProviderOptions = {}): LlmProvider {
  const baseURL = options.baseURL ?? nonEmpty(process.env.OPENAI_BASE_URL);
  const apiKey = apiKeyOf(options, baseURL);
  const timeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  const client = new OpenAI({
    apiKey,
    maxRetries: 0,
    timeout: Math.max(1, Math.ceil(timeoutMs)),
    ...(baseURL ? { baseURL } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const fallbackModel = options.model ?? options.models?.default;
  const retry = {
    retries: options.retries ?? DEFAULT_LLM_RETRIES,
    baseMs: options.retryBaseMs ?? 500,
    maxMs: options.retryMaxMs ?? 8_000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    random: options.random ?? Math.random,
  };
  const override = options.modelOverride === null ? undefined : (options.modelOverride ?? nonEmpty(process.env.FLOWING_MODEL));

  function modelFor(request: LlmRequest): string | undefined {
    return override ?? request.model ?? options.models?.[request.kind] ?? fallbackModel;
  }

  function begin(request: LlmRequest, call: LlmCallOptions): ChatCall {
    const model = modelFor(request);
    if (!model) {
      throw new FlowingError(
        'LLM_NOT_CONFIGURED',
        `no model for this ${request.kind} call: name one in the spec, in the provider's model or models options, or in FLOWING_MODEL`,
      );
    }
    if (call.signal.aborted)
      throw new FlowingError('CANCELLED', `the ${request.kind} call was cancelled before it started`, { cause: call.signal.reason });
    const onRetry = call.onRetry;
    // A retried request's error is logged as it happens, before `finish` could mask a key the server echoed in it.
    const masked: LlmCallOptions = onRetry ? { ...call, onRetry: (r) => onRetry(withoutKey(r, apiKey)) } : call;
    return startCall(client, model, masked, request, call.timeoutMs ?? timeoutMs, call.clock ?? systemClock, retry);
  }

  /** Runs the call; its failures carry the attempts and the usage so far, since tokens were spent either way. */
  async function finish<T>(call: ChatCall, work: Promise<T>): Promise<LlmResult<T>> {
    try {
      const output = await work;
      return {
        output,
        model: call.model,
        usage: { ...call.usage },
        attempts: call.attempts,
        ...(call.finishReason ? { finishReason: call.finishReason } : {}),
      };
    } catch (error) {
      const flow = error instanceof FlowingError ? error : new FlowingError('LLM_FAILED', String(error), { cause: error });
      const details = typeof flow.details === 'object' && flow.details !== null ? flow.details : {};
      // The message and details are logged and stored: a server that echoes the key in its error text must not put it there.
      throw new FlowingError(flow.code, withoutKey(flow.message, apiKey), {
        cause: flow.cause,
        details: withoutKey({ ...details, model: call.model, attempts: call.attempts, usage: { ...call.usage } }, apiKey),
      });
    }
  }

  return {
    name: 'openai',
    isModel: true,
    modelFor,
    async classify(request, callOptions) {
      const call = begin(request, callOptions);
      return finish(
        call,
        classifyWithRepair(call, request).then((label) => ({ label })),
      );
    },
    async extract(request, callOptions) {
      const call = begin(request, callOptions);
      return finish(call, extractWithRepair(call, request));
    },
    async generate(request, callOptions) {
      const call = begin(request, callOptions);
      const messages = chatMessages(request, request.system, request.prompt);
      return finish(
        call,
        streamText(call, { messages }, callOptions.onDelta).then((text) => ({ text })),
      );
    },
    async agent(request, callOptions) {
      const call = begin(request, callOptions);
      return finish(call, runAgentLoop(call, request, callOptions));
    },
  };
}

/** The key from the options or OPENAI_API_KEY; a local server (a base URL) may need none. */
function apiKeyOf(options: OpenAIProviderOptions, baseURL: string | undefined): string {
  const apiKey = options.apiKey ?? nonEmpty(process.env.OPENAI_API_KEY) ?? (baseURL ? 'no-key' : undefined);
  if (apiKey === undefined) {
    throw new FlowingError(
      'LLM_NOT_CONFIGURED',
      'the OpenAI provider has no API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server',
    );
  }
  return apiKey;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** `value` (a string or JSON data) with every occurrence of the API key masked to its first 3 and last 4 characters. */
function withoutKey<T>(value: T, apiKey: string): T {
  if (apiKey.length < 8) return value;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (!text.includes(apiKey)) return value;
  const masked = text.replaceAll(apiKey, `${apiKey.slice(0, 3)}…${apiKey.slice(-4)}`);
  return (typeof value === 'string' ? masked : JSON.parse(masked)) as T;
}
