import type { Hono } from 'hono';
import { z } from 'zod';
import { FlowingError, formatIssues } from '../../errors.ts';
import type { RuntimeEvent } from '../../events.ts';
import { exportSessionFile } from '../../inspect/export.ts';
import { readSessionLog } from '../../inspect/read-log.ts';
import { sessionAt, type SessionAt } from '../../inspect/session-at.ts';
import { SESSION_ID_PATTERN } from '../constants.ts';
import { sessionIdParam, type ServerScope } from '../context.ts';
import { readJsonObject } from '../body.ts';
import { ServerError } from '../errors.ts';
import { toSessionView, type SessionView } from '../session-view.ts';

/**
 * `GET /sessions/:id/at/:seq` answers this: the session right after the event with `seq` (0 = before the first
 * event), folded from the stored events alone (no tool, no model runs). Errors: 400 `SERVER_BAD_REQUEST` (`:seq`
 * not a non-negative integer), 404 `SESSION_NOT_FOUND`, 404 `INSPECT_SEQ_OUT_OF_RANGE` (`details: { seq, lastSeq }`).
 */
export interface SessionAtView extends SessionAt {
  sessionId: string;
  machineId: string;
  /** Seq of the session's last event now. */
  lastSeq: number;
  /** The event at `seq` itself (null for seq 0). */
  event: RuntimeEvent | null;
}

/**
 * Body of `POST /sessions/:id/fork`: fork the session at the state and context it had right after event `atSeq`.
 * `context` is a patch of top-level context fields (each replaces the field; `null` clears an optional one), checked
 * against the machine's context schema. `sessionId` picks the new session's id (otherwise a random one).
 */
export interface ForkRequest {
  atSeq: number;
  context?: Record<string, unknown>;
  sessionId?: string;
}

/**
 * `POST /sessions/:id/fork` answers 201 with the new session's view (`Location: /sessions/<new id>`) plus its link to
 * the parent. The new session's `session.started` event carries `parentId` and `forkedAt` too. Nothing of the parent
 * is re-run; when the state at `atSeq` invokes a tool or model call, the fork makes that call itself on entry, and
 * its `after` timers start with their full delay.
 * Errors: 400 `SERVER_BAD_REQUEST` (body shape), 404 `SESSION_NOT_FOUND`, 404 `INSPECT_SEQ_OUT_OF_RANGE`,
 * 409 `FORK_NO_STATE` (no state yet at `atSeq`), 409 `FORK_MID_CALL` (a call was in flight at `atSeq`; `details`
 * name it and the seqs to fork at instead), 409 `FORK_ENDED` (the session had ended at `atSeq`), 409 `FORK_TIMED_STATE` (the state waits on a named delay; numeric `after` timers start anew in the fork), 409 `SPEC_CHANGED`,
 * 409 `SESSION_EXISTS`, 422 `FORK_CONTEXT_INVALID` (`details.issues[].path` names the field).
 */
export interface ForkView extends SessionView {
  parentId: string;
  forkedAt: number;
}

/**
 * `GET /sessions/:id/export` answers `application/x-ndjson` with `Content-Disposition: attachment;
 * filename="<machine>-<session>.flowing.jsonl"`: line 1 the header `{ kind: 'flowing.session', formatVersion: 1,
 * machineId, specHash, sessionId, exportedAt }`, then one line per event `{ event: RuntimeEvent }`, then one line per
 * journal entry `{ journal: JournalEntry }` (see `parseSessionFile`). Errors: 404 `SESSION_NOT_FOUND`.
 */
export const EXPORT_CONTENT_TYPE = 'application/x-ndjson';

const SEQ_PATTERN = /^\d{1,15}$/;

/** Inspection routes: the state at an event, export, fork. */
export function inspectRoutes(app: Hono, scope: ServerScope) {
  const { runtime, options } = scope;

  app.get('/sessions/:id/at/:seq', async (c) => {
    const id = sessionIdParam(c);
    const raw = c.req.param('seq') ?? '';
    if (!SEQ_PATTERN.test(raw)) throw new ServerError('SERVER_BAD_REQUEST', `:seq must be a non-negative integer (got ${JSON.stringify(raw.slice(0, 40))})`);
    const seq = Number(raw);
    const { record, events } = await readSessionLog(runtime.store, id);
    const lastSeq = events.length === 0 ? 0 : events[events.length - 1]!.seq;
    if (seq > lastSeq) throw new FlowingError('INSPECT_SEQ_OUT_OF_RANGE', `session ${id} has events 1 to ${lastSeq}; there is no event ${seq}`, { details: { seq, lastSeq } });
    const view: SessionAtView = { ...sessionAt(events, seq), sessionId: id, machineId: record.machineId, lastSeq, event: seq === 0 ? null : events[seq - 1] ?? null };
    return c.json(view);
  });

  app.get('/sessions/:id/export', async (c) => {
    const id = sessionIdParam(c);
    const file = await exportSessionFile(runtime.store, id, { now: options.now() });
    c.header('Content-Type', EXPORT_CONTENT_TYPE);
    c.header('Content-Disposition', `attachment; filename="${file.fileName}"`);
    return c.body(file.text);
  });

  app.post('/sessions/:id/fork', async (c) => {
    const parentId = sessionIdParam(c);
    scope.checkSessionRate(parentId);
    const parsed = ForkBody.safeParse(await readJsonObject(c, options));
    if (!parsed.success) throw new ServerError('SERVER_BAD_REQUEST', `the body does not fit this route: ${formatIssues(parsed.error.issues)}`);
    const body = parsed.data;
    if (body.sessionId !== undefined) {
      scope.checkSessionRate(body.sessionId);
      if (await runtime.store.load(body.sessionId)) throw new ServerError('SESSION_EXISTS', `a session '${body.sessionId}' already exists`);
    }
    const session = await runtime.forkSession(parentId, body.atSeq, { ...(body.context ? { context: body.context } : {}), ...(body.sessionId ? { sessionId: body.sessionId } : {}) });
    const view: ForkView = { ...toSessionView(await session.snapshot()), parentId, forkedAt: body.atSeq };
    c.header('Location', `/sessions/${session.id}`);
    return c.json(view, 201);
  });
}

const ForkBody = z.strictObject({
  atSeq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  context: z.record(z.string(), z.unknown()).optional(),
  sessionId: z.string().regex(SESSION_ID_PATTERN, 'a session id is 1-128 characters of A-Z a-z 0-9 _ -').optional(),
});
