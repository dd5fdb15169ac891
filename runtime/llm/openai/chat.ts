import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessage,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import { backoffDelay } from '../../calls/backoff.ts';
import { Deadline, sleep } from '../../deadline.ts';
import { FlowingError } from '../../errors.ts';
import type { LlmCallOptions, LlmRequestBase, LlmUsage } from '../types.ts';
import { mapOpenAIError } from './errors.ts';
import type { Clock } from '../../clock.ts';
import { requestDeadline } from './guard.ts';

/** When a model request is tried again: a rate limit, a server error or a timeout, never after text reached the user. */
export interface RetryPolicy {
  /** Extra requests after the first; 0 turns retries off. */
  retries: number;
  /** First delay; doubles per retry, with jitter, capped at `maxMs`. */
  baseMs: number;
  maxMs: number;
  /** A `Retry-After` longer than this is not waited for: the call fails with the provider's error. */
  maxRetryAfterMs: number;
  random: () => number;
}

/** The state one provider call carries across its model requests (repairs, agent iterations). @internal */
export interface ChatCall {
  client: OpenAI;
  model: string;
  signal: AbortSignal;
  timeoutMs: number;
  clock: Clock;
  retry: RetryPolicy;
  /** Sampling settings of the request, sent with every model request of the call. */
  sampling: { temperature?: number; top_p?: number; max_completion_tokens?: number };
  onRetry?: LlmCallOptions['onRetry'];
  onTokens?: LlmCallOptions['onTokens'];
  /** Summed over every request of the call. */
  usage: LlmUsage;
  /** Requests made so far, retries included. */
  attempts: number;
  /** Why the model stopped its last answer (`stop`, `length`, `tool_calls` ...), as the API said. */
  finishReason?: string;
}

/** Request fields besides the model, which the call supplies. */
export type ChatParams = Omit<ChatCompletionCreateParamsNonStreaming, 'model' | 'stream' | 'stream_options'>;

/** Starts the book-keeping of one provider call. @internal */
export function startCall(
  client: OpenAI,
  model: string,
  options: LlmCallOptions,
  request: LlmRequestBase,
  timeoutMs: number,
  clock: Clock,
  retry: RetryPolicy,
): ChatCall {
  return {
    client,
    model,
    signal: options.signal,
    timeoutMs,
    clock,
    retry,
    sampling: {
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.topP === undefined ? {} : { top_p: request.topP }),
      ...(request.maxTokens === undefined ? {} : { max_completion_tokens: request.maxTokens }),
    },
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    ...(options.onTokens ? { onTokens: options.onTokens } : {}),
    usage: { promptTokens: 0, completionTokens: 0 },
    attempts: 0,
  };
}

function addUsage(call: ChatCall, usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): void {
  if (!usage) return;
  call.usage.promptTokens += usage.prompt_tokens ?? 0;
  call.usage.completionTokens += usage.completion_tokens ?? 0;
}

function requestOptions(call: ChatCall, guard: Deadline) {
  // The SDK timeout only covers the wait for response headers; the guard also covers silence inside a stream.
  return { signal: guard.signal, timeout: Math.max(1, Math.ceil(call.timeoutMs)), maxRetries: 0 };
}

/**
 * Runs one model request, again after a rate limit (429), a server error (5xx), a timeout or a cut connection, at
 * most `retry.retries` more times, waiting the provider's `Retry-After` or an exponential backoff with jitter. A
 * request that already streamed text to the caller is never tried again: the user would read it twice.
 */
async function withRetries<T>(call: ChatCall, attempt: (sent: { text: boolean }) => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    const sent = { text: false };
    try {
      return await attempt(sent);
    } catch (error) {
      const flow = error as FlowingError;
      const delayMs = retry < call.retry.retries && !sent.text && !call.signal.aborted ? retryDelay(call, flow, retry + 1) : undefined;
      if (delayMs === undefined) throw error;
      call.onRetry?.({ attempt: retry + 2, delayMs, error: { code: flow.code, message: flow.message } });
      const wait = new Deadline(call.clock, { parent: call.signal });
      try {
        await sleep(call.clock, delayMs, wait);
      } catch {
        throw new FlowingError('CANCELLED', `the call to model '${call.model}' was cancelled while waiting to retry`, { cause: error });
      } finally {
        wait.dispose();
      }
    }
  }
}

/** The wait before retry number `n`, or undefined when the error is not worth another request. */
function retryDelay(call: ChatCall, error: FlowingError, n: number): number | undefined {
  const details = (error.details ?? {}) as { status?: number; retryAfter?: string; transient?: boolean };
  const transient =
    error.code === 'LLM_RATE_LIMITED' ||
    error.code === 'LLM_TIMEOUT' ||
    (error.code === 'LLM_FAILED' && (details.transient === true || (details.status !== undefined && details.status >= 500)));
  if (!transient) return undefined;
  const backoff = backoffDelay(n, call.retry.baseMs, call.retry.maxMs, call.retry.random);
  const after = retryAfterMs(details.retryAfter, call.clock.now());
  if (after === undefined) return backoff;
  return after > call.retry.maxRetryAfterMs ? undefined : after;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date (`retry-after-ms` arrives as `<n>ms`). */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const ms = /^(\d+)ms$/.exec(value.trim());
  if (ms) return Number(ms[1]);
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** One non-streamed chat completion; returns the first choice's message. Throws coded FlowingErrors. @internal */
export function complete(call: ChatCall, params: ChatParams): Promise<ChatCompletionMessage> {
  return withRetries(call, () => completeOnce(call, params));
}

async function completeOnce(call: ChatCall, params: ChatParams): Promise<ChatCompletionMessage> {
  const guard = requestDeadline(call.signal, call.timeoutMs, call.model, call.clock);
  call.attempts += 1;
  try {
    const completion = await guard.race(
      call.client.chat.completions.create({ ...call.sampling, ...params, model: call.model, stream: false }, requestOptions(call, guard)),
    );
    addUsage(call, completion.usage);
    if (completion.choices[0]?.finish_reason) call.finishReason = completion.choices[0].finish_reason;
    const message = completion.choices[0]?.message;
    if (!message) throw new FlowingError('LLM_BAD_OUTPUT', `model '${call.model}' answered with no choices`);
    return message;
  } catch (error) {
    throw guard.reason ?? mapOpenAIError(error, call.model);
  } finally {
    guard.dispose();
  }
}

/** What a streamed answer adds up to: its text and the tool calls it made. */
export interface StreamedMessage {
  content: string;
  tool_calls: ChatCompletionMessageFunctionToolCall[];
}

/**
 * One streamed chat completion: `onDelta` gets each content piece in order, never after the call was aborted;
 * tool-call pieces are put together by index; the usage comes from the final chunk. `call.onTokens` hears an estimate
 * of the tokens written so far after each piece, and may stop the stream by throwing. Throws coded FlowingErrors.
 * @internal
 */
export function streamMessage(call: ChatCall, params: ChatParams, onDelta: ((text: string) => void) | undefined): Promise<StreamedMessage> {
  return withRetries(call, (sent) => streamOnce(call, params, onDelta, sent));
}

/** A streamed answer's text. @internal */
export async function streamText(call: ChatCall, params: ChatParams, onDelta: ((text: string) => void) | undefined): Promise<string> {
  return (await streamMessage(call, params, onDelta)).content;
}

/** Tokens in streamed text before the provider reports the usage: about four characters each. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

async function streamOnce(
  call: ChatCall,
  params: ChatParams,
  onDelta: ((text: string) => void) | undefined,
  sent: { text: boolean },
): Promise<StreamedMessage> {
  const guard = requestDeadline(call.signal, call.timeoutMs, call.model, call.clock);
  call.attempts += 1;
  let iterator: AsyncIterator<ChatCompletionChunk> | undefined;
  let text = '';
  let usageSeen = false;
  try {
    const stream = await guard.race(
      call.client.chat.completions.create(
        { ...call.sampling, ...params, model: call.model, stream: true, stream_options: { include_usage: true } },
        requestOptions(call, guard),
      ),
    );
    iterator = stream[Symbol.asyncIterator]();
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    let finished = false;
    for (;;) {
      guard.touch();
      const next = await guard.race(iterator.next());
      // The SDK ends the iteration quietly when its request is aborted, so check before trusting the end.
      if (guard.reason) throw guard.reason;
      if (next.done) break;
      const chunk = next.value;
      if (chunk.usage) usageSeen = true;
      addUsage(call, chunk.usage);
      for (const choice of chunk.choices) {
        const piece = choice.delta?.content;
        if (piece) {
          text += piece;
          if (onDelta) {
            sent.text = true;
            onDelta(piece);
          }
          call.onTokens?.(estimateTokens(text));
        }
        for (const part of choice.delta?.tool_calls ?? []) {
          const slot = (calls[part.index] ??= { id: '', name: '', arguments: '' });
          if (part.id) slot.id = part.id;
          if (part.function?.name) slot.name += part.function.name;
          if (part.function?.arguments) slot.arguments += part.function.arguments;
        }
        if (choice.finish_reason) {
          finished = true;
          call.finishReason = choice.finish_reason;
        }
      }
    }
    if (!finished)
      throw new FlowingError('LLM_FAILED', `the stream from model '${call.model}' ended before the model finished its answer`, {
        details: { transient: true },
      });
    return {
      content: text,
      tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
    };
  } catch (error) {
    // Tokens of a cut stream were spent too; the provider reports none, so count the estimate.
    if (!usageSeen) call.usage.completionTokens += estimateTokens(text);
    throw guard.reason ?? mapOpenAIError(error, call.model);
  } finally {
    guard.dispose();
    // Closes the HTTP stream when the loop stopped early (abort, timeout, a thrown onDelta).
    void iterator?.return?.().catch(() => {});
  }
}
