import {
  EMPTY_SESSION_AT,
  ForkBody,
  foldEvent,
  type ForkView,
  type RuntimeEvent,
  type SessionAt,
  type SessionAtView,
} from '@flowing/protocol';
import { FlowingError, toFlowError } from '../../errors.ts';
import { exportSessionStream } from '../../inspect/export.ts';
import { eventPages, loadRecord } from '../../inspect/read-log.ts';
import { sessionIdParam, type ServerScope } from '../context.ts';
import { parseBody, readJsonObject } from '../body.ts';
import { ServerError } from '../errors.ts';
import type { ServerLogger } from '../log.ts';
import { answer, type RouteHandlers } from '../route.ts';
import { toSessionView } from '../session-view.ts';

/**
 * A response body that takes the next chunk only when the client has read the last one (`pull`), so a slow reader
 * holds back the store reads instead of letting them pile up in memory. A read that fails mid-way ends the body
 * with an error (the client sees a cut file, which `parseSessionFile` refuses), logged with its code.
 */
function pulledStream(chunks: AsyncIterable<string>, log: ServerLogger, sessionId: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await iterator.next();
          if (next.done) controller.close();
          else controller.enqueue(encoder.encode(next.value));
        } catch (error) {
          const flow = toFlowError(error, 'STORE_UNAVAILABLE');
          log({ level: 'error', code: flow.code, message: `the export of session ${sessionId} stopped mid-way: ${flow.message}` });
          controller.error(error);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/** The content type of `GET /sessions/:id/export` (a session file: `parseSessionFile` reads it). */
export const EXPORT_CONTENT_TYPE = 'application/x-ndjson';

const SEQ_PATTERN = /^\d{1,15}$/;

/**
 * Inspection routes (their answers are described in @flowing/protocol):
 * - `GET /sessions/:id/at/:seq`: the session right after event `seq`. Errors: 400 `SERVER_BAD_REQUEST` (`:seq` not a
 *   non-negative integer), 404 `SESSION_NOT_FOUND`, 404 `INSPECT_SEQ_OUT_OF_RANGE` (`details: { seq, lastSeq }`).
 * - `GET /sessions/:id/export`: the session file, `Content-Disposition: attachment; filename="<machine>-<session>.flowing.jsonl"`.
 *   Errors: 404 `SESSION_NOT_FOUND`.
 * - `POST /sessions/:id/fork`: 201 with the new session's view (`Location: /sessions/<new id>`) and its link to the
 *   parent; its `session.started` event carries `parentId` and `forkedAt` too. Nothing of the parent is re-run; when
 *   the state at `atSeq` invokes a tool or model call, the fork makes that call itself on entry, and its `after`
 *   timers start with their full delay. Errors: 400 `SERVER_BAD_REQUEST` (body shape), 404 `SESSION_NOT_FOUND`,
 *   404 `INSPECT_SEQ_OUT_OF_RANGE`, 409 `FORK_NO_STATE` (no state yet at `atSeq`), 409 `FORK_MID_CALL` (a call was in
 *   flight at `atSeq`; `details` name it and the seqs to fork at instead), 409 `FORK_ENDED` (the session had ended at
 *   `atSeq`), 409 `FORK_TIMED_STATE` (the state waits on a named delay; numeric `after` timers start anew in the
 *   fork), 409 `SPEC_CHANGED`, 409 `SESSION_EXISTS`, 422 `FORK_CONTEXT_INVALID` (`details.issues[].path` names the field).
 */
export function inspectRoutes(
  scope: ServerScope,
): Pick<RouteHandlers, 'GET /sessions/:id/at/:seq' | 'GET /sessions/:id/export' | 'POST /sessions/:id/fork'> {
  const { runtime, options } = scope;
  return {
    'GET /sessions/:id/at/:seq': async (c) => {
      const id = sessionIdParam(c);
      const raw = c.req.param('seq') ?? '';
      if (!SEQ_PATTERN.test(raw))
        throw new ServerError('SERVER_BAD_REQUEST', `:seq must be a non-negative integer (got ${JSON.stringify(raw.slice(0, 40))})`);
      const seq = Number(raw);
      const record = await loadRecord(runtime.store, id);
      const lastSeq = record.seq;
      if (seq > lastSeq)
        throw new FlowingError('INSPECT_SEQ_OUT_OF_RANGE', `session ${id} has events 1 to ${lastSeq}; there is no event ${seq}`, {
          details: { seq, lastSeq },
        });
      // Folded a page at a time: the events up to `seq` are never held all at once.
      let at: SessionAt = EMPTY_SESSION_AT;
      let event: RuntimeEvent | null = null;
      for await (const page of eventPages(runtime.store, id, { upTo: seq })) {
        for (const e of page) at = foldEvent(at, e);
        event = page[page.length - 1] ?? event;
      }
      const view: SessionAtView = { ...at, sessionId: id, machineId: record.machineId, lastSeq, event };
      return answer(c, view);
    },

    'GET /sessions/:id/export': async (c) => {
      const id = sessionIdParam(c);
      const file = await exportSessionStream(runtime.store, id, { now: options.now() });
      c.header('Content-Type', EXPORT_CONTENT_TYPE);
      c.header('Content-Disposition', `attachment; filename="${file.fileName}"`);
      return c.body(pulledStream(file.chunks, options.log, id));
    },

    'POST /sessions/:id/fork': async (c) => {
      const parentId = sessionIdParam(c);
      scope.checkSessionRate(parentId);
      const body = parseBody(ForkBody, await readJsonObject(c, options));
      if (body.sessionId !== undefined) {
        scope.checkSessionRate(body.sessionId);
        if (await runtime.store.load(body.sessionId))
          throw new ServerError('SESSION_EXISTS', `a session '${body.sessionId}' already exists`);
      }
      const session = await runtime.forkSession(parentId, body.atSeq, {
        ...(body.context ? { context: body.context } : {}),
        ...(body.sessionId ? { sessionId: body.sessionId } : {}),
      });
      const view: ForkView = { ...toSessionView(await session.snapshot()), parentId, forkedAt: body.atSeq };
      c.header('Location', `/sessions/${session.id}`);
      return answer(c, view, 201);
    },
  };
}
