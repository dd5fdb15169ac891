import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';

/** Token counts the fake reports for a turn. */
export interface FakeUsage {
  prompt: number;
  completion: number;
}
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string;
}

/**
 * One scripted answer. A `reply` is sent as a JSON completion, or as SSE chunks when the request asks to stream
 * (`chunks`, else the content in one piece); `stallAfterChunks` sends that many chunks and then hangs;
 * `cutAfterChunks` sends that many and then drops the connection.
 */
export type FakeTurn =
  | {
      type: 'reply';
      content?: string;
      toolCalls?: FakeToolCall[];
      chunks?: string[];
      usage?: FakeUsage;
      intervalMs?: number;
      stallAfterChunks?: number;
      /** Sends that many content chunks, then destroys the connection (a stream cut mid-answer). */
      cutAfterChunks?: number;
    }
  | { type: 'error'; status: number; message?: string; headers?: Record<string, string> }
  | { type: 'stall' };

/** A request the fake received, with what became of it. */
export interface RecordedRequest {
  body: ChatBody;
  /** HTTP status sent (0 while nothing was sent). */
  status: number;
  /** The pairing problem that earned a 400, if any. */
  pairingError?: string;
  /** True once the client closed the connection before the answer was complete. */
  clientClosed: boolean;
  /** Content chunks written to a stream. */
  chunksSent: number;
  /** When the request arrived (performance.now()). */
  at: number;
}

// Loose on purpose: the fake checks what the SDK sent rather than trusting a type.
export interface ChatBody {
  model: string;
  stream?: boolean;
  messages: Array<{
    role: string;
    content?: unknown;
    tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  [key: string]: unknown;
}

export const reply = (content: string, extra: Omit<Extract<FakeTurn, { type: 'reply' }>, 'type' | 'content'> = {}): FakeTurn => ({
  type: 'reply',
  content,
  ...extra,
});
export const toolCalls = (calls: FakeToolCall[], extra: { usage?: FakeUsage; content?: string } = {}): FakeTurn => ({
  type: 'reply',
  toolCalls: calls,
  ...extra,
});
export const streamed = (
  chunks: string[],
  extra: { usage?: FakeUsage; intervalMs?: number; stallAfterChunks?: number; cutAfterChunks?: number } = {},
): FakeTurn => ({ type: 'reply', chunks, ...extra });
export const httpError = (status: number, message = `fake error ${status}`, headers?: Record<string, string>): FakeTurn => ({
  type: 'error',
  status,
  message,
  ...(headers ? { headers } : {}),
});
export const stall = (): FakeTurn => ({ type: 'stall' });

/**
 * Checks OpenAI's tool-call pairing rule: every `tool_calls` id of an assistant message is answered by a `tool`
 * message before the next non-tool message, and every tool message answers such an id. Returns the first breach.
 */
export function findPairingError(messages: ChatBody['messages']): string | undefined {
  let open = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      if (!message.tool_call_id || !open.has(message.tool_call_id))
        return `messages[${index}]: tool message for '${message.tool_call_id}' answers no open tool call`;
      open.delete(message.tool_call_id);
      continue;
    }
    if (open.size > 0) return `messages[${index}]: tool call(s) ${[...open].join(', ')} have no tool message`;
    open = new Set((message.role === 'assistant' ? (message.tool_calls ?? []) : []).map((call) => call.id));
  }
  return open.size > 0 ? `tool call(s) ${[...open].join(', ')} have no tool message` : undefined;
}

/** A running fake OpenAI-compatible server on 127.0.0.1 (a real HTTP server on port 0). */
export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/v1`, for the SDK's `baseURL`. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Appends scripted answers; each request takes the next one. */
  enqueue(...turns: FakeTurn[]): void;
  /** Turns not yet used. */
  pending(): number;
  close(): Promise<void>;
}

/**
 * Starts the fake. It serves `POST /v1/chat/completions` from the queue of turns, records every request body, and
 * answers a request that breaks tool-call pairing (or arrives with an empty queue) with a 400.
 * @example const fake = await startFakeOpenAI(); fake.enqueue(reply('{"label":"refund"}'));
 */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: FakeTurn[] = [];
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  // Requests whose answer was sent in full; a connection closed before that counts as closed by the client.
  const finished = new WeakSet<RecordedRequest>();
  const app = new Hono();

  app.post('/v1/chat/completions', async (c) => {
    const body = (await c.req.json()) as ChatBody;
    const record: RecordedRequest = { body, status: 0, clientClosed: false, chunksSent: 0, at: performance.now() };
    requests.push(record);
    c.req.raw.signal.addEventListener(
      'abort',
      () => {
        if (!finished.has(record)) record.clientClosed = true;
      },
      { once: true },
    );

    const pairingError = findPairingError(body.messages ?? []);
    if (pairingError) {
      record.pairingError = pairingError;
      record.status = 400;
      finished.add(record);
      return c.json({ error: { message: `fake-openai: ${pairingError}`, type: 'invalid_request_error', code: 'tool_call_pairing' } }, 400);
    }
    const turn = queue.shift();
    if (!turn) {
      record.status = 400;
      finished.add(record);
      return c.json({ error: { message: 'fake-openai: no scripted turn left for this request', type: 'invalid_request_error' } }, 400);
    }
    if (turn.type === 'error') {
      record.status = turn.status;
      finished.add(record);
      return c.json({ error: { message: turn.message ?? 'fake error', type: 'server_error' } }, turn.status as 400, turn.headers);
    }
    if (turn.type === 'stall') {
      await untilClosed(c.req.raw.signal, closing.signal);
      return c.body(null, 504);
    }
    const id = `chatcmpl-${requests.length}`;
    if (!body.stream) {
      record.status = 200;
      finished.add(record);
      return c.json(completion(id, body.model, turn));
    }
    record.status = 200;
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => {
        if (!finished.has(record)) record.clientClosed = true;
      });
      for (const chunk of chunksOf(id, body.model, turn)) {
        if (turn.stallAfterChunks !== undefined && record.chunksSent >= turn.stallAfterChunks) {
          await untilClosed(c.req.raw.signal, closing.signal);
          return;
        }
        if (turn.cutAfterChunks !== undefined && record.chunksSent >= turn.cutAfterChunks) {
          // The chunks pass a stream pipe before the socket: let them reach the client before the cut.
          if (record.chunksSent > 0) await stream.sleep(50);
          (c.env as { incoming: IncomingMessage }).incoming.socket.destroy();
          return;
        }
        if (stream.aborted) return;
        await stream.writeSSE({ data: JSON.stringify(chunk) });
        record.chunksSent += 1;
        if (turn.intervalMs) await stream.sleep(turn.intervalMs);
      }
      await stream.writeSSE({ data: '[DONE]' });
      finished.add(record);
    });
  });

  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server)) as Server;
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...turns) => void queue.push(...turns),
    pending: () => queue.length,
    close: async () => {
      closing.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function untilClosed(...signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const done = () => {
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    };
    for (const s of signals) s.addEventListener('abort', done, { once: true });
  });
}

function usageOf(turn: Extract<FakeTurn, { type: 'reply' }>) {
  const usage = turn.usage ?? { prompt: 10, completion: 5 };
  return { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion };
}

function wireToolCalls(turn: Extract<FakeTurn, { type: 'reply' }>) {
  return turn.toolCalls?.map((call, index) => ({
    id: call.id ?? `call_${index}`,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
}

function completion(id: string, model: string, turn: Extract<FakeTurn, { type: 'reply' }>) {
  const calls = wireToolCalls(turn);
  const content = turn.content ?? turn.chunks?.join('') ?? null;
  return {
    id,
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, ...(calls ? { tool_calls: calls } : {}) },
        finish_reason: calls ? 'tool_calls' : 'stop',
        logprobs: null,
      },
    ],
    usage: usageOf(turn),
  };
}

function chunksOf(id: string, model: string, turn: Extract<FakeTurn, { type: 'reply' }>) {
  const base = { id, object: 'chat.completion.chunk', created: 0, model };
  const pieces = turn.chunks ?? (turn.content !== undefined ? [turn.content] : []);
  const out: object[] = pieces.map((piece, index) => ({
    ...base,
    choices: [{ index: 0, delta: { ...(index === 0 ? { role: 'assistant' } : {}), content: piece }, finish_reason: null, logprobs: null }],
  }));
  const calls = wireToolCalls(turn);
  if (calls)
    out.push({
      ...base,
      choices: [{ index: 0, delta: { tool_calls: calls.map((call, index) => ({ index, ...call })) }, finish_reason: null }],
    });
  out.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: calls ? 'tool_calls' : 'stop', logprobs: null }] });
  out.push({ ...base, choices: [], usage: usageOf(turn) });
  return out;
}
