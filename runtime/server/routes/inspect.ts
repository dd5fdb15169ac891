import { ForkBody, sessionAt, type ForkView, type SessionAtView } from '@flowing/protocol';
import { FlowingError } from '../../errors.ts';
import { exportSessionFile } from '../../inspect/export.ts';
import { readSessionLog } from '../../inspect/read-log.ts';
import { sessionIdParam, type ServerScope } from '../context.ts';
import { parseBody, readJsonObject } from '../body.ts';
import { ServerError } from '../errors.ts';
import { answer, type RouteHandlers } from '../route.ts';
import { toSessionView } from '../session-view.ts';

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
      const { record, events } = await readSessionLog(runtime.store, id);
      const lastSeq = events.length === 0 ? 0 : events[events.length - 1]!.seq;
      if (seq > lastSeq)
        throw new FlowingError('INSPECT_SEQ_OUT_OF_RANGE', `session ${id} has events 1 to ${lastSeq}; there is no event ${seq}`, {
          details: { seq, lastSeq },
        });
      const view: SessionAtView = {
        ...sessionAt(events, seq),
        sessionId: id,
        machineId: record.machineId,
        lastSeq,
        event: seq === 0 ? null : (events[seq - 1] ?? null),
      };
      return answer(c, view);
    },

    'GET /sessions/:id/export': async (c) => {
      const id = sessionIdParam(c);
      const file = await exportSessionFile(runtime.store, id, { now: options.now() });
      c.header('Content-Type', EXPORT_CONTENT_TYPE);
      c.header('Content-Disposition', `attachment; filename="${file.fileName}"`);
      return c.body(file.text);
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
