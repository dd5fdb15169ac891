import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessage } from 'openai/resources/chat/completions';
import { FlowingError } from '../../errors.ts';
import type { LlmUsage } from '../types.ts';
import { mapOpenAIError } from './errors.ts';
import type { Clock } from '../../clock.ts';
import type { Deadline } from '../../deadline.ts';
import { requestDeadline } from './guard.ts';

/** The state one provider call carries across its model requests (repairs, agent iterations). @internal */
export interface ChatCall {
  client: OpenAI;
  model: string;
  signal: AbortSignal;
  timeoutMs: number;
  clock: Clock;
  /** Summed over every request of the call. */
  usage: LlmUsage;
  /** Requests made so far. */
  attempts: number;
}

/** Request fields besides the model, which the call supplies. */
export type ChatParams = Omit<ChatCompletionCreateParamsNonStreaming, 'model' | 'stream' | 'stream_options'>;

/** Starts the book-keeping of one provider call. @internal */
export function startCall(client: OpenAI, model: string, signal: AbortSignal, timeoutMs: number, clock: Clock): ChatCall {
  return { client, model, signal, timeoutMs, clock, usage: { promptTokens: 0, completionTokens: 0 }, attempts: 0 };
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

/** One non-streamed chat completion; returns the first choice's message. Throws coded FlowingErrors. @internal */
export async function complete(call: ChatCall, params: ChatParams): Promise<ChatCompletionMessage> {
  const guard = requestDeadline(call.signal, call.timeoutMs, call.model, call.clock);
  call.attempts += 1;
  try {
    const completion = await guard.race(
      call.client.chat.completions.create({ ...params, model: call.model, stream: false }, requestOptions(call, guard)),
    );
    addUsage(call, completion.usage);
    const message = completion.choices[0]?.message;
    if (!message) throw new FlowingError('LLM_BAD_OUTPUT', `model '${call.model}' answered with no choices`);
    return message;
  } catch (error) {
    throw guard.reason ?? mapOpenAIError(error, call.model);
  } finally {
    guard.dispose();
  }
}

/**
 * One streamed chat completion: `onDelta` gets each content piece in order, never after the call was aborted;
 * the usage comes from the final chunk. Returns the whole text. Throws coded FlowingErrors.
 * @internal
 */
export async function streamText(call: ChatCall, params: ChatParams, onDelta: ((text: string) => void) | undefined): Promise<string> {
  const guard = requestDeadline(call.signal, call.timeoutMs, call.model, call.clock);
  call.attempts += 1;
  let iterator: AsyncIterator<ChatCompletionChunk> | undefined;
  try {
    const stream = await guard.race(
      call.client.chat.completions.create(
        { ...params, model: call.model, stream: true, stream_options: { include_usage: true } },
        requestOptions(call, guard),
      ),
    );
    iterator = stream[Symbol.asyncIterator]();
    let text = '';
    let finished = false;
    for (;;) {
      guard.touch();
      const next = await guard.race(iterator.next());
      // The SDK ends the iteration quietly when its request is aborted, so check before trusting the end.
      if (guard.reason) throw guard.reason;
      if (next.done) break;
      const chunk = next.value;
      addUsage(call, chunk.usage);
      for (const choice of chunk.choices) {
        const piece = choice.delta?.content;
        if (piece) {
          text += piece;
          onDelta?.(piece);
        }
        if (choice.finish_reason) finished = true;
      }
    }
    if (!finished) throw new FlowingError('LLM_FAILED', `the stream from model '${call.model}' ended before the model finished its answer`);
    return text;
  } catch (error) {
    throw guard.reason ?? mapOpenAIError(error, call.model);
  } finally {
    guard.dispose();
    // Closes the HTTP stream when the loop stopped early (abort, timeout, a thrown onDelta).
    void iterator?.return?.().catch(() => {});
  }
}
