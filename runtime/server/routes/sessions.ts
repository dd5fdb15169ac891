import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { FlowingError, formatIssues } from '../../errors.ts';
import type { SendResult } from '../../session/run.ts';
import type { ApprovalRecord, SessionStatus } from '../../store/types.ts';
import type { Session } from '../../runtime.ts';
import { readJsonObject } from '../body.ts';
import { SESSION_ID_PATTERN } from '../constants.ts';
import { intQuery, sessionIdParam, type ServerScope } from '../context.ts';
import { ServerError, statusOf } from '../errors.ts';
import { ResolutionBody, resolveUnknownOutcome } from '../resolve.ts';
import { toSessionView } from '../session-view.ts';

const STATUSES: readonly SessionStatus[] = ['running', 'waiting', 'done', 'error', 'cancelled', 'needs_attention'];

const CreateBody = z.strictObject({
  machine: z.string().min(1).max(200),
  input: z.record(z.string(), z.unknown()).optional(),
  sessionId: z.string().regex(SESSION_ID_PATTERN, 'a session id is 1-128 characters of A-Z a-z 0-9 _ -').optional(),
});

const ApprovalBody = z.strictObject({
  approvalId: z.string().max(400).optional(),
  reason: z.string().max(2000).optional(),
});

const CancelBody = z.strictObject({ reason: z.string().max(2000).optional() });

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ServerError('SERVER_BAD_REQUEST', `the body does not fit this route: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** Answers a SendResult: 200 when applied, the refusal's documented status otherwise. */
export function sendResultResponse(c: Context, result: SendResult) {
  const retryAfter = result.applied ? undefined : (result.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
  return c.json(result, result.applied ? 200 : (statusOf(result.code) as 409));
}

const DECIDED = { approve: 'approved', reject: 'rejected' } as const;

/** The answer to a repeated decision: applied, marked `duplicate`, with the `approval.decided` event it repeats. */
async function repeatedDecision(session: Session<{ type: string }>, approvalId: string) {
  const snapshot = await session.snapshot();
  const events = await session.events();
  const decided = events.findLast((e) => e.type === 'approval.decided' && (e.data as { approvalId?: unknown }).approvalId === approvalId);
  return { applied: true, duplicate: true, state: snapshot.state, status: snapshot.status, events: decided ? [decided] : [] };
}

/** Session routes: create, list, read, log, send, cancel, approve and reject. */
export function sessionRoutes(app: Hono, scope: ServerScope) {
  const { runtime, options } = scope;

  app.post('/sessions', async (c) => {
    const body = parseBody(CreateBody, await readJsonObject(c, options));
    const info = runtime.machines.get(body.machine);
    if (!info) {
      throw new FlowingError('UNKNOWN_MACHINE', `no machine '${body.machine.slice(0, 200)}' is served (served: ${[...runtime.machines.keys()].join(', ')})`);
    }
    if (body.input !== undefined) {
      const check = info.contextSchema.partial().safeParse(body.input);
      if (!check.success) {
        throw new ServerError('SERVER_INVALID_INPUT', `input for '${body.machine}' does not match its context: ${formatIssues(check.error.issues)}`, { details: { issues: check.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) } });
      }
    }
    if (body.sessionId !== undefined) {
      scope.checkSessionRate(body.sessionId);
      if (await runtime.store.load(body.sessionId)) throw new ServerError('SESSION_EXISTS', `a session '${body.sessionId}' already exists`);
    }
    const session = await runtime.createSession(body.machine, body.input, body.sessionId === undefined ? {} : { sessionId: body.sessionId });
    const view = toSessionView(await session.snapshot());
    c.header('Location', `/sessions/${session.id}`);
    return c.json(view, 201);
  });

  app.get('/sessions', async (c) => {
    const statusParam = c.req.query('status');
    const status = statusParam === undefined || statusParam === '' ? undefined : statusParam.split(',');
    for (const s of status ?? []) {
      if (!(STATUSES as readonly string[]).includes(s)) throw new ServerError('SERVER_BAD_REQUEST', `?status= takes ${STATUSES.join(', ')} (comma-separated), not ${JSON.stringify(s.slice(0, 40))}`);
    }
    const machine = c.req.query('machine');
    const cursor = c.req.query('cursor');
    const page = await runtime.store.listSessions({
      ...(machine ? { machineId: machine } : {}),
      ...(status ? { status: status as SessionStatus[] } : {}),
      limit: intQuery(c, 'limit', 50),
      ...(cursor ? { cursor } : {}),
    });
    return c.json(page);
  });

  app.get('/sessions/:id', async (c) => {
    return c.json(toSessionView(await runtime.session(sessionIdParam(c)).snapshot()));
  });

  app.get('/sessions/:id/events', async (c) => {
    const session = runtime.session(sessionIdParam(c));
    const snapshot = await session.snapshot();
    const after = intQuery(c, 'after', 0);
    const limit = Math.min(intQuery(c, 'limit', 500), 1000);
    const events = await runtime.store.readEvents(session.id, after, limit);
    const last = events.length > 0 ? events[events.length - 1]!.seq : after;
    return c.json({ events, ...(last < snapshot.seq ? { nextAfter: last } : {}) });
  });

  app.post('/sessions/:id/events', async (c) => {
    const id = sessionIdParam(c);
    scope.checkSessionRate(id);
    const event = await readJsonObject(c, options);
    const session = runtime.session(id);
    await session.snapshot(); // 404 for an unknown session before anything is logged
    // The runtime checks the type and payload against the machine's declared events (and logs a refusal).
    return sendResultResponse(c, await session.send(event as { type: string }));
  });

  app.post('/sessions/:id/cancel', async (c) => {
    const id = sessionIdParam(c);
    scope.checkSessionRate(id);
    const body = parseBody(CancelBody, await readJsonObject(c, options));
    const session = runtime.session(id);
    await session.snapshot();
    await session.cancel(body.reason ?? 'cancelled through the API');
    return c.json(toSessionView(await session.snapshot()));
  });

  app.post('/sessions/:id/resolve', async (c) => {
    const id = sessionIdParam(c);
    scope.checkSessionRate(id);
    const resolution = parseBody(ResolutionBody, await readJsonObject(c, options));
    await resolveUnknownOutcome(runtime, id, resolution, options.now());
    return c.json(toSessionView(await runtime.session(id).snapshot()));
  });

  for (const decision of ['approve', 'reject'] as const) {
    app.post(`/sessions/:id/${decision}`, async (c) => {
      const id = sessionIdParam(c);
      scope.checkSessionRate(id);
      const body = parseBody(ApprovalBody, await readJsonObject(c, options));
      const session = runtime.session(id);
      // A retry of a decision already taken (same approvalId, same decision) answers as the decision did, and runs nothing.
      const repeated = (approval: ApprovalRecord | undefined) => body.approvalId !== undefined && approval?.id === body.approvalId && approval.decision === DECIDED[decision];
      const pending = (await session.snapshot()).approval;
      if (repeated(pending)) return c.json(await repeatedDecision(session, pending!.id));
      if (!pending || pending.decision) throw new ServerError('NO_PENDING_APPROVAL', `session ${id} waits for no approval`);
      if (body.approvalId !== undefined && body.approvalId !== pending.id) {
        throw new ServerError('NO_PENDING_APPROVAL', `approval ${JSON.stringify(body.approvalId.slice(0, 200))} is not the one session ${id} waits for (${pending.id})`, { details: { pendingApprovalId: pending.id } });
      }
      const event = decision === 'approve' ? { type: 'APPROVE' } : { type: 'REJECT', ...(body.reason === undefined ? {} : { reason: body.reason }) };
      const result = await session.send(event);
      // Two requests for the same decision at once: the one applied second finds it taken.
      if (!result.applied && repeated((await session.snapshot()).approval)) return c.json(await repeatedDecision(session, pending.id));
      return sendResultResponse(c, result);
    });
  }
}
