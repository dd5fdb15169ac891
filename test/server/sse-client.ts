import type { IncomingMessage } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** What one SSE connection delivered. */
export interface SseRead {
  status: number;
  headers: Headers;
  events: EventSourceMessage[];
  comments: string[];
  retry?: number;
  /** The raw bytes as text, for checks of the framing itself. */
  raw: string;
  /** True when the body ended normally; false when the connection broke. */
  complete: boolean;
}

/**
 * Reads one SSE response with `eventsource-parser` until it ends, breaks, or `until` says to stop (then the request
 * is aborted). A broken connection is not an error: `complete` is false.
 */
export async function readSse(url: string, init: RequestInit & { until?: (read: SseRead) => boolean } = {}): Promise<SseRead> {
  const controller = new AbortController();
  const read: SseRead = { status: 0, headers: new Headers(), events: [], comments: [], raw: '', complete: false };
  const parser = createParser({
    onEvent: (event) => read.events.push(event),
    onComment: (comment) => read.comments.push(comment),
    onRetry: (retry) => (read.retry = retry),
  });
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: controller.signal });
  } catch {
    return read;
  }
  read.status = response.status;
  read.headers = response.headers;
  if (!response.body) return { ...read, complete: true };
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        read.complete = true;
        break;
      }
      const text = decoder.decode(value, { stream: true });
      read.raw += text;
      parser.feed(text);
      if (init.until?.(read)) {
        controller.abort();
        break;
      }
    }
  } catch {
    // the connection broke; what was dispatched before stays
  }
  return read;
}

/**
 * An EventSource-like loop over `readSse`: reconnects with Last-Event-ID after every break until the server answers
 * 204 (nothing more, ever). Returns every dispatched event, in arrival order, across all connections.
 */
export async function followSse(
  url: string,
  options: { headers?: Record<string, string>; maxConnections?: number } = {},
): Promise<{ events: EventSourceMessage[]; connections: number }> {
  const events: EventSourceMessage[] = [];
  let lastId: string | undefined;
  for (let connections = 1; connections <= (options.maxConnections ?? 1000); connections++) {
    const read = await readSse(url, { headers: { ...options.headers, ...(lastId === undefined ? {} : { 'last-event-id': lastId }) } });
    if (read.status === 204) return { events, connections };
    if (read.status !== 0 && read.status !== 200) throw new Error(`stream answered ${read.status}: ${read.raw.slice(0, 200)}`);
    for (const event of read.events) {
      events.push(event);
      if (event.id !== undefined) lastId = event.id;
    }
  }
  throw new Error(`the stream did not end within ${options.maxConnections ?? 1000} connections`);
}

/** Feeds the SSE bytes of a Node response to `eventsource-parser`: each event, and each `:` comment (a heartbeat). */
export function parseSseResponse(
  res: IncomingMessage,
  handlers: { onEvent?: (event: EventSourceMessage) => void; onComment?: () => void },
): void {
  const parser = createParser({ onEvent: (event) => handlers.onEvent?.(event), onComment: () => handlers.onComment?.() });
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => parser.feed(chunk));
}
