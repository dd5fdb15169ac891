import {
  CancelBody,
  CreateSessionBody,
  DecisionBody,
  ResolutionBody,
  SESSION_STATUSES,
  type SendAnswer,
  type SessionStatus,
} from '@flowing/protocol';
import type { Context } from 'hono';
import { FlowingError, formatIssues } from '../../errors.ts';
import type { SendResult } from '../../session/run.ts';
import type { ApprovalRecord } from '../../store/types.ts';
import type { SendOptions, Session } from '../../runtime.ts';
import { parseBody, readJsonObject } from '../body.ts';
import { intQuery, sessionIdParam, type ServerScope } from '../context.ts';
import { ServerError, statusOf } from '../errors.ts';
import { resolveUnknownOutcome } from '../resolve.ts';
import { answer, type Answer, type RouteHandlers } from '../route.ts';
import { decidedChild, invokesMachines } from '../../session/decided-child.ts';
import { approvalToDecide, toSessionView } from '../session-view.ts';

/** The send options a request asks for: its `Idempotency-Key` header as the event id (checked by the runtime). */
export function sendOptionsOf(c: Context): SendOptions {
  const key = c.req.header('idempotency-key');
  return key === undefined ? {} : { eventId: key };
}

/** Answers a SendResult: 200 when applied, the refusal's documented status otherwise. */
export function sendResultResponse(c: Context, result: SendResult): Answer<SendAnswer> {
  const retryAfter = result.applied ? undefined : (result.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
  return answer(c, result, result.applied ? 200 : (statusOf(result.code) as 409));
}

const DECIDED = { approve: 'approved', reject: 'rejected' } as const;

/** The answer to a repeated decision: applied, marked `duplicate`, with the `approval.decided` event it repeats. */
async function repeatedDecision(session: Session<{ type: string }>, approvalId: string): Promise<SendAnswer> {
  const snapshot = await session.snapshot();
  const events = await session.events();
  const decided = events.findLast((e) => e.type === 'approval.decided' && (e.data as { approvalId?: unknown }).approvalId === approvalId);
  return { applied: true, duplicate: true, state: snapshot.state, status: snapshot.status, events: decided ? [decided] : [] };
}

type SessionRoutes =
  | 'POST /sessions'
  | 'GET /sessions'
  | 'GET /sessions/:id'
  | 'GET /sessions/:id/events'
  | 'POST /sessions/:id/events'
  | 'POST /sessions/:id/cancel'
  | 'POST /sessions/:id/resolve'
  | 'POST /sessions/:id/approve'
  | 'POST /sessions/:id/reject';

/** Session routes: create, list, read, log, send, cancel, resolve, approve and reject. */
export function sessionRoutes(scope: ServerScope): Pick<RouteHandlers, SessionRoutes> {
  const { runtime, options } = scope;

  /** Approve or reject the approval the session waits for; a repeat of a decision taken answers as it did. */
  const decide =
    (decision: 'approve' | 'reject') =>
    async (c: Context): Promise<Answer<SendAnswer>> => {
      const id = sessionIdParam(c);
      scope.checkSessionRate(id);
      const body = parseBody(DecisionBody, await readJsonObject(c, options));
      const session = runtime.session(id);
      // A retry of a decision already taken (same approvalId, same decision) answers as the decision did, and runs nothing.
      const repeated = (approval: ApprovalRecord | undefined) =>
        body.approvalId !== undefined && approval?.id === body.approvalId && approval.decision === DECIDED[decision];
      // A session that waits on a child session decides the child's approval (the runtime forwards the event).
      const pending = approvalToDecide(await session.snapshot());
      if (repeated(pending)) return answer(c, await repeatedDecision(session, pending!.id));
      if (!pending || pending.decision) return lateDecision(c, id, decision, body.approvalId);
      if (body.approvalId !== undefined && body.approvalId !== pending.id) {
        throw new ServerError(
          'NO_PENDING_APPROVAL',
          `approval ${JSON.stringify(body.approvalId.slice(0, 200))} is not the one session ${id} waits for (${pending.id})`,
          { details: { pendingApprovalId: pending.id } },
        );
      }
      const event =
        decision === 'approve' ? { type: 'APPROVE' } : { type: 'REJECT', ...(body.reason === undefined ? {} : { reason: body.reason }) };
      const result = await session.send(event);
      // Two requests for the same decision at once: the one applied second finds it taken.
      if (!result.applied && repeated(approvalToDecide(await session.snapshot())))
        return answer(c, await repeatedDecision(session, pending.id));
      return sendResultResponse(c, result);
    };

  /**
   * A decision for a session that waits for none. When its child session decided the approval already, a retry (same
   * approvalId and decision, or same Idempotency-Key) answers as the decision did, and anything else is refused with
   * APPROVAL_ALREADY_DECIDED naming the child; without such a child, NO_PENDING_APPROVAL.
   */
  const lateDecision = async (c: Context, id: string, decision: 'approve' | 'reject', approvalId: string | undefined) => {
    const record = await runtime.store.load(id);
    const info = record && runtime.machines.get(record.machineId);
    const event = { type: decision === 'approve' ? 'APPROVE' : 'REJECT' };
    const { eventId } = sendOptionsOf(c);
    const late =
      info &&
      (await decidedChild(
        { sessionId: id, invokesMachines: invokesMachines(info), readEvents: (after, limit) => runtime.store.readEvents(id, after, limit) },
        (childId) => runtime.store.load(childId),
        event,
        eventId,
      ));
    if (!late) throw new ServerError('NO_PENDING_APPROVAL', `session ${id} waits for no approval`);
    if ('childId' in late)
      return sendResultResponse(c, { ...(await runtime.session(late.childId).send(event, { eventId })), forwardedTo: late.childId });
    const decided = late.refusal.details as { childId: string; approvalId: string; decision: string };
    if (approvalId === decided.approvalId && decided.decision === DECIDED[decision])
      return answer(c, { ...(await repeatedDecision(runtime.session(decided.childId), approvalId)), forwardedTo: decided.childId });
    return sendResultResponse(c, { applied: false, ...late.refusal });
  };

  return {
    'POST /sessions': async (c) => {
      const body = parseBody(CreateSessionBody, await readJsonObject(c, options));
      const info = runtime.machines.get(body.machine);
      if (!info) {
        throw new FlowingError(
          'UNKNOWN_MACHINE',
          `no machine '${body.machine.slice(0, 200)}' is served (served: ${[...runtime.machines.keys()].join(', ')})`,
        );
      }
      if (body.input !== undefined) {
        const check = info.contextSchema.partial().safeParse(body.input);
        if (!check.success) {
          throw new ServerError(
            'SERVER_INVALID_INPUT',
            `input for '${body.machine}' does not match its context: ${formatIssues(check.error.issues)}`,
            { details: { issues: check.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) } },
          );
        }
      }
      if (body.sessionId !== undefined) {
        scope.checkSessionRate(body.sessionId);
        if (await runtime.store.load(body.sessionId))
          throw new ServerError('SESSION_EXISTS', `a session '${body.sessionId}' already exists`);
      }
      const session = await runtime.createSession(
        body.machine,
        body.input,
        body.sessionId === undefined ? {} : { sessionId: body.sessionId },
      );
      const view = toSessionView(await session.snapshot());
      c.header('Location', `/sessions/${session.id}`);
      return answer(c, view, 201);
    },

    'GET /sessions': async (c) => {
      const statusParam = c.req.query('status');
      const status = statusParam === undefined || statusParam === '' ? undefined : statusParam.split(',');
      for (const s of status ?? []) {
        if (!(SESSION_STATUSES as readonly string[]).includes(s))
          throw new ServerError(
            'SERVER_BAD_REQUEST',
            `?status= takes ${SESSION_STATUSES.join(', ')} (comma-separated), not ${JSON.stringify(s.slice(0, 40))}`,
          );
      }
      const machine = c.req.query('machine');
      if (c.req.query('stale') === 'true') {
        const sessions = await runtime.staleSessions({ ...(machine ? { machineId: machine } : {}), limit: intQuery(c, 'limit', 500) });
        return answer(c, { sessions });
      }
      const cursor = c.req.query('cursor');
      const page = await runtime.store.listSessions({
        ...(machine ? { machineId: machine } : {}),
        ...(status ? { status: status as SessionStatus[] } : {}),
        limit: intQuery(c, 'limit', 50),
        ...(cursor ? { cursor } : {}),
      });
      return answer(c, page);
    },

    'GET /sessions/:id': async (c) => answer(c, toSessionView(await runtime.session(sessionIdParam(c)).snapshot())),

    'GET /sessions/:id/events': async (c) => {
      const session = runtime.session(sessionIdParam(c));
      const snapshot = await session.snapshot();
      const after = intQuery(c, 'after', 0);
      const limit = Math.min(intQuery(c, 'limit', 500), 1000);
      const events = await runtime.store.readEvents(session.id, after, limit);
      const last = events.length > 0 ? events[events.length - 1]!.seq : after;
      return answer(c, { events, ...(last < snapshot.seq ? { nextAfter: last } : {}) });
    },

    'POST /sessions/:id/events': async (c) => {
      const id = sessionIdParam(c);
      scope.checkSessionRate(id);
      const event = await readJsonObject(c, options);
      const session = runtime.session(id);
      await session.snapshot(); // 404 for an unknown session before anything is logged
      // The runtime checks the type and payload against the machine's declared events (and logs a refusal).
      return sendResultResponse(c, await session.send(event as { type: string }, sendOptionsOf(c)));
    },

    'POST /sessions/:id/cancel': async (c) => {
      const id = sessionIdParam(c);
      scope.checkSessionRate(id);
      const body = parseBody(CancelBody, await readJsonObject(c, options));
      const session = runtime.session(id);
      await session.snapshot();
      const outcome = await session.cancel(body.reason ?? 'cancelled through the API');
      // A finished session is not cancelled again and nothing is logged: 409 with the reason.
      if (!outcome.cancelled) throw new FlowingError(outcome.code, `session ${id} cannot be cancelled: ${outcome.message}`);
      return answer(c, toSessionView(await session.snapshot()));
    },

    'POST /sessions/:id/resolve': async (c) => {
      const id = sessionIdParam(c);
      scope.checkSessionRate(id);
      const resolution = parseBody(ResolutionBody, await readJsonObject(c, options));
      await resolveUnknownOutcome(runtime, id, resolution, options.now());
      return answer(c, toSessionView(await runtime.session(id).snapshot()));
    },

    'POST /sessions/:id/approve': decide('approve'),
    'POST /sessions/:id/reject': decide('reject'),
  };
}
