import type { ServerResponse } from 'node:http';
import { FINISHED_STATUSES, type StreamResult } from '@flowing/protocol';
import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { Session } from '../../runtime.ts';
import type { SendResult } from '../../session/run.ts';
import { readJsonObject } from '../body.ts';
import { intQuery, sessionIdParam, type ServerScope } from '../context.ts';
import { publicError, ServerError } from '../errors.ts';
import type { RouteHandlers } from '../route.ts';
import { sendOptionsOf } from './sessions.ts';
import { EventPipe } from '../sse.ts';

/** Where a stream starts: Last-Event-ID (a reconnect) wins over `?after=`; both must be a seq the session has reached. */
function resumePoint(c: Context, lastSeq: number): number {
  const header = c.req.header('last-event-id');
  const after =
    header !== undefined && header !== ''
      ? /^\d{1,15}$/.test(header)
        ? Number(header)
        : Number.NaN
      : intQuery(c, 'after', 0, 'SERVER_BAD_EVENT_ID');
  if (Number.isNaN(after))
    throw new ServerError(
      'SERVER_BAD_EVENT_ID',
      `Last-Event-ID must be an event seq (a non-negative integer), not ${JSON.stringify(header!.slice(0, 40))}`,
    );
  if (after > lastSeq) {
    throw new ServerError(
      'SERVER_STALE_EVENT_ID',
      `event ${after} is beyond the last event of this session (${lastSeq}); reconnect without Last-Event-ID to read from the start`,
      { details: { lastSeq } },
    );
  }
  return after;
}

/**
 * Ends a stream's connection that still holds unread bytes: the Node response itself when served by
 * @hono/node-server (ending the body would wait for a client that does not read), else the stream.
 */
function connectionCloser(c: Context, stream: SSEStreamingApi): () => void {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return () => {
    if (outgoing) {
      if (!outgoing.writableFinished) outgoing.destroy();
    } else if (!stream.closed) stream.abort();
  };
}

/** Proxies must not buffer or compress the stream. */
function streamHeaders(c: Context) {
  c.header('X-Accel-Buffering', 'no');
}

/** `GET /sessions/:id/stream` (SSE with resume) and `POST /sessions/:id/events/stream` (send and stream what follows). */
export function streamRoutes(scope: ServerScope): Pick<RouteHandlers, 'GET /sessions/:id/stream' | 'POST /sessions/:id/events/stream'> {
  const { runtime, options } = scope;
  const pipeOptions = (endWhenFinished: boolean, closeConnection: () => void) => ({
    heartbeatMs: options.heartbeatMs,
    retryMs: options.retryMs,
    log: options.log,
    endWhenFinished,
    maxLag: options.maxStreamLag,
    closeConnection,
  });

  return {
    'GET /sessions/:id/stream': async (c) => {
      const session = runtime.session(sessionIdParam(c));
      const snapshot = await session.snapshot();
      const after = resumePoint(c, snapshot.seq);
      // 204 tells an EventSource to stop reconnecting: there is nothing left to send, ever.
      if (FINISHED_STATUSES.has(snapshot.status) && after >= snapshot.seq) return c.body(null, 204);
      streamHeaders(c);
      return streamSSE(c, async (stream) => {
        const closed = scope.disconnects.streamOpened(session.id);
        try {
          const pipe = new EventPipe(stream, session, after, pipeOptions(true, connectionCloser(c, stream)));
          await pipe.done;
        } finally {
          closed();
        }
      });
    },

    'POST /sessions/:id/events/stream': async (c) => {
      const id = sessionIdParam(c);
      scope.checkSessionRate(id);
      const event = await readJsonObject(c, options);
      const session = runtime.session(id);
      const before = await session.snapshot();
      scope.disconnects.clear(id);
      streamHeaders(c);
      return streamSSE(c, async (stream) => {
        const pipe = new EventPipe(stream, session, before.seq, pipeOptions(false, connectionCloser(c, stream)));
        let settled = false;
        const sending = session.send(event as { type: string }, sendOptionsOf(c)).finally(() => {
          settled = true;
          scope.disconnects.clear(id);
        });
        stream.onAbort(() => {
          if (!settled) scope.disconnects.clientGone(id, () => cancelGeneration(session));
        });
        // A send that throws (the session's machine changed, the store failed) still ends the stream with a coded result.
        const result: SendResult = await sending.catch((error: unknown) => {
          const shown = publicError(error);
          options.log({
            level: 'error',
            code: shown.code,
            message: `streaming send to session ${id} failed: ${(error as Error).message}`,
            sessionId: id,
          });
          return { applied: false as const, ...shown };
        });
        // A client cut off for being too slow has its stream ended already; it reads the outcome with GET /sessions/:id.
        if (!stream.aborted && !pipe.cutOff) {
          const lastSeq = await session.snapshot().then(
            (snapshot) => snapshot.seq,
            () => pipe.lastSeq,
          );
          await pipe.waitFor(lastSeq);
          const { events: _events, ...summary } = result.applied ? result : { ...result, events: undefined };
          // The outcome has no id: it is not a log event, so a reconnect's Last-Event-ID never points at it.
          await stream.writeSSE({ event: 'result', data: JSON.stringify(summary satisfies StreamResult) });
        }
        pipe.stop();
      });
    },
  };
}

async function cancelGeneration(session: Session): Promise<void> {
  await session.cancel('the client of a streaming request went away and did not come back within the grace period');
}
