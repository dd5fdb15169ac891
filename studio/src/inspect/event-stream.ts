import { createParser } from 'eventsource-parser';
import { FINISHED_STATUSES, RUNTIME_EVENT_TYPES, type RuntimeEvent } from '@flowing/protocol';
import { errorFromAnswer, hasCode } from '../api-error.ts';
import { routeAt, runtimeClient, runtimeHeaders, type RuntimeEndpoint } from './runtime-client.ts';
import type { StreamState } from './inspect-store.ts';
const MAX_BACKOFF_MS = 5_000;

export interface SessionStreamHandlers {
  /** New events in seq order, each seq once (a resumed connection never repeats one). */
  onEvents(events: RuntimeEvent[]): void;
  onState(state: StreamState, detail?: string): void;
}

/**
 * Follows a session's log live from `afterSeq`: `GET /sessions/:id/stream` (SSE), resuming exactly after the last
 * event seen when the connection drops. Without a token the browser's EventSource does the resuming (Last-Event-ID);
 * with a token, fetch + eventsource-parser sends the header itself (EventSource cannot send Authorization). When the
 * server closes the stream, the session's status decides: finished ends it, anything else reconnects.
 * Events are handed over once per animation frame, so a long replay is one render, not thousands.
 * @returns a function that closes the stream
 */
export function openSessionStream(
  endpoint: RuntimeEndpoint,
  sessionId: string,
  afterSeq: number,
  handlers: SessionStreamHandlers,
): () => void {
  let lastSeq = afterSeq;
  let closed = false;
  let batch: RuntimeEvent[] = [];
  let flushQueued = false;
  let backoff = 250;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let source: EventSource | undefined;
  let abort: AbortController | undefined;
  const client = runtimeClient(endpoint);
  const streamUrl = () => routeAt(endpoint, 'GET /sessions/:id/stream', { params: { id: sessionId }, query: { after: lastSeq } });

  const flush = () => {
    flushQueued = false;
    if (closed || batch.length === 0) return;
    const events = batch;
    batch = [];
    handlers.onEvents(events);
  };
  const accept = (data: string) => {
    let event: RuntimeEvent;
    try {
      event = JSON.parse(data) as RuntimeEvent;
    } catch {
      handlers.onState('error', 'RUNTIME_BAD_EVENT: the stream sent an event that is not JSON');
      return;
    }
    if (typeof event.seq !== 'number' || event.seq <= lastSeq) return;
    lastSeq = event.seq;
    backoff = 250;
    batch.push(event);
    if (!flushQueued) {
      flushQueued = true;
      // A frame, or 50 ms when the tab is hidden and frames stop.
      let done = false;
      const once = () => {
        if (!done) {
          done = true;
          flush();
        }
      };
      requestAnimationFrame(once);
      setTimeout(once, 50);
    }
  };

  /** The server ended the stream or it failed: stop when the session finished, else come back after a pause. */
  const afterDrop = async (why: string) => {
    if (closed) return;
    handlers.onState('reconnecting', why);
    try {
      const view = await client.getSession(sessionId);
      if (closed) return;
      if (FINISHED_STATUSES.has(view.status) && view.seq <= lastSeq) {
        flush();
        handlers.onState('closed');
        return;
      }
    } catch (error) {
      if (hasCode(error, 'SESSION_NOT_FOUND') || hasCode(error, 'SERVER_UNAUTHORIZED')) {
        handlers.onState('error', `${error.code}: ${error.message}`);
        return;
      }
    }
    retryTimer = setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  };

  const connectEventSource = () => {
    const es = new EventSource(streamUrl());
    source = es;
    es.onopen = () => handlers.onState('open');
    // The runtime's `error` event shares its name with EventSource's connection errors: only a MessageEvent is data,
    // and a plain Event named `error` is the connection's.
    const onMessage = (message: Event) => {
      if (message instanceof MessageEvent) accept(String(message.data));
    };
    // EventSource dispatches named events only to listeners of that name: one per event type the runtime writes.
    for (const type of RUNTIME_EVENT_TYPES) es.addEventListener(type, onMessage);
    es.onerror = (event) => {
      if (closed || source !== es || event instanceof MessageEvent) return;
      // CONNECTING: the browser reconnects by itself with Last-Event-ID. CLOSED: it gave up (204, or an error status).
      if (es.readyState === EventSource.CONNECTING)
        handlers.onState('reconnecting', 'the connection dropped; the browser resumes after the last event');
      else {
        es.close();
        source = undefined;
        void afterDrop('the stream ended');
      }
    };
  };

  const connectFetch = async () => {
    const controller = new AbortController();
    abort = controller;
    try {
      const response = await fetch(streamUrl(), {
        headers: runtimeHeaders(endpoint, { accept: 'text/event-stream', ...(lastSeq > 0 ? { 'last-event-id': String(lastSeq) } : {}) }),
        signal: controller.signal,
        cache: 'no-store',
      });
      if (response.status === 204) {
        flush();
        handlers.onState('closed');
        return;
      }
      if (!response.ok || !response.body) {
        const refused = errorFromAnswer('runtime', response.status, await response.text().catch(() => ''));
        if (response.status === 401 || response.status === 403 || response.status === 404) {
          handlers.onState('error', `${refused.code}: ${refused.message}`);
          return;
        }
        throw refused;
      }
      handlers.onState('open');
      const parser = createParser({
        onEvent: (message) => {
          if (message.id !== undefined) accept(message.data);
        },
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
      await afterDrop('the server ended the stream');
    } catch (error) {
      if (closed || controller.signal.aborted) return;
      await afterDrop(`the connection failed (${(error as Error).message})`);
    }
  };

  const connect = () => {
    if (closed) return;
    handlers.onState(lastSeq === afterSeq ? 'connecting' : 'reconnecting');
    if (endpoint.token) void connectFetch();
    else connectEventSource();
  };

  connect();
  return () => {
    closed = true;
    if (retryTimer) clearTimeout(retryTimer);
    source?.close();
    abort?.abort();
  };
}
