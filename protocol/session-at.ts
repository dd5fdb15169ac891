/**
 * The state of a session at one event of its log, folded from the recorded events alone: no store, no machine, no
 * tool, no model. The runtime (`GET /sessions/:id/at/:seq`, fork, replay) and the studio's inspector run this one fold.
 */
import { applyContextChange } from './context-change.ts';
import type { SessionStatus } from './events.ts';

/** The fields of a log event the fold reads; a `RuntimeEvent` fits. */
export interface FoldableEvent {
  readonly seq: number;
  readonly at: number;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A tool or model call that started and had no result yet at the folded event. */
export interface PendingCall {
  callId: string;
  kind: 'tool' | 'llm';
  /** Tool name, or the model call's kind (classify, extract, generate, agent). */
  name: string;
  /** The tool's arguments as validated by its contract (model calls: absent). */
  args?: unknown;
  startedAt: number;
  /** 1 for the first attempt; raised by each `tool.retry`. */
  attempt: number;
}

/** The approval the session asked for, and its decision once made. */
export interface ApprovalAt {
  approvalId: string;
  state: string;
  tool: string;
  args: unknown;
  argsHash: string;
  decision?: 'approved' | 'rejected';
  /** What the person who decided said, when they said something. */
  reason?: string;
}

/** The last refused event up to the folded one. */
export interface RejectionAt {
  seq: number;
  event: string | null;
  states: string[];
  code: string;
  reason: string;
}

/** The session as it was right after the event with `seq`. */
export interface SessionAt {
  /** Seq of the folded event (0 before the first event). */
  seq: number;
  /** The XState state value (a string, or an object for compound and parallel states); null before the first step. */
  state: unknown;
  /** Dotted paths of the active leaf states (`active.idle`; several inside a parallel state). */
  activeStates: string[];
  /** The context after this event (the session's input before its first step). */
  context: unknown;
  /**
   * Read from the events: `running` while a call is in flight, `waiting` otherwise. A state that waits for a timer
   * only (an `after` transition, no call) shows as `waiting` here, where the runtime says `running`.
   */
  status: SessionStatus;
  pendingCalls: PendingCall[];
  approval: ApprovalAt | null;
  lastRejection: RejectionAt | null;
}

/** The view of a session before its first event. */
export const EMPTY_SESSION_AT: Readonly<SessionAt> = Object.freeze({
  seq: 0,
  state: null,
  activeStates: [],
  context: null,
  status: 'running',
  pendingCalls: [],
  approval: null,
  lastRejection: null,
}) as SessionAt;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * Dotted paths of the active leaf states of an XState state value: `'idle'` gives `['idle']`,
 * `{ active: 'classify' }` gives `['active.classify']`, a parallel state one path per region.
 * @example
 * activeStatePaths({ work: { a: 'one', b: 'two' } }); // ['work.a.one', 'work.b.two']
 */
export function activeStatePaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix + value];
  if (value === null || typeof value !== 'object') return [];
  const paths: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const below = activeStatePaths(child, `${prefix}${key}.`);
    paths.push(...(below.length > 0 ? below : [prefix + key]));
  }
  return paths;
}

function withoutCall(calls: readonly PendingCall[], callId: unknown): PendingCall[] {
  return calls.filter((call) => call.callId !== callId);
}

/**
 * Applies one event to the view (pure: neither argument is changed). Folding a log from `EMPTY_SESSION_AT` gives what
 * the runtime had after each event.
 */
export function foldEvent(view: SessionAt, event: FoldableEvent): SessionAt {
  const d = event.data;
  const next: SessionAt = { ...view, seq: event.seq };
  switch (event.type) {
    case 'session.started':
      return { ...EMPTY_SESSION_AT, seq: event.seq, context: d.input ?? null, status: 'running' };
    case 'state.changed':
      next.state = d.state ?? null;
      next.activeStates = activeStatePaths(d.state);
      next.context = applyContextChange(view.context, d);
      if (view.status === 'running' || view.status === 'waiting') next.status = view.pendingCalls.length > 0 ? 'running' : 'waiting';
      return next;
    case 'session.migrated':
      // Carried onto another version of the machine: the state (renamed paths) and context it continues with.
      next.state = d.state ?? null;
      next.activeStates = activeStatePaths(d.state);
      if ('context' in d) next.context = d.context;
      return next;
    case 'transition.rejected':
      next.lastRejection = {
        seq: event.seq,
        event: typeof d.event === 'string' ? d.event : null,
        states: Array.isArray(d.states) ? d.states.map(String) : [],
        code: text(d.code),
        reason: text(d.reason),
      };
      return next;
    case 'tool.started':
    case 'llm.started': {
      const kind = event.type === 'tool.started' ? 'tool' : 'llm';
      const call: PendingCall = {
        callId: text(d.callId),
        kind,
        name: kind === 'tool' ? text(d.tool) : text(d.kind),
        startedAt: event.at,
        attempt: 1,
      };
      if (kind === 'tool') call.args = d.args;
      next.pendingCalls = [...withoutCall(view.pendingCalls, d.callId), call];
      if (view.status === 'waiting') next.status = 'running';
      return next;
    }
    case 'tool.retry':
      next.pendingCalls = view.pendingCalls.map((call) =>
        call.callId === d.callId ? { ...call, attempt: typeof d.attempt === 'number' ? d.attempt : call.attempt + 1 } : call,
      );
      // A person asked for the call to run again: the session goes on.
      if (d.resolvedBy === 'person' && view.status === 'needs_attention') next.status = 'running';
      return next;
    case 'tool.completed':
    case 'tool.failed':
    case 'llm.completed':
    case 'llm.failed':
      next.pendingCalls = withoutCall(view.pendingCalls, d.callId);
      // Still running: the machine takes the result next (its state.changed says whether it then waits). A person's
      // answer for a call with an unknown outcome sets the session going again.
      if (d.resolvedBy === 'person' && view.status === 'needs_attention') next.status = 'running';
      return next;
    case 'tool.unknown_outcome':
      // Only a call of the machine itself stops the session; a timed-out call fails on (reason), an agent's call is
      // told to the agent (its id has a `/<n>` suffix).
      if (d.reason === undefined && !text(d.callId).includes('/')) next.status = 'needs_attention';
      else next.pendingCalls = withoutCall(view.pendingCalls, d.callId);
      return next;
    case 'approval.requested':
      next.approval = {
        approvalId: text(d.approvalId),
        state: text(d.state),
        tool: text(d.tool),
        args: d.args,
        argsHash: text(d.argsHash),
      };
      return next;
    case 'approval.decided':
      if (view.approval && view.approval.approvalId === d.approvalId)
        next.approval = {
          ...view.approval,
          decision: d.decision === 'approved' ? 'approved' : 'rejected',
          ...(typeof d.reason === 'string' ? { reason: d.reason } : {}),
        };
      return next;
    case 'error':
      if (d.recoverable === false) next.status = 'error';
      // A call's result or a timer that no branch takes is refused (an `xstate.` event) and stops for a person.
      else if (view.lastRejection && view.lastRejection.seq === event.seq - 1 && view.lastRejection.event?.startsWith('xstate.'))
        next.status = 'needs_attention';
      return next;
    case 'session.cancelled':
      next.status = 'cancelled';
      next.pendingCalls = [];
      return next;
    case 'session.done':
      next.status = 'done';
      next.pendingCalls = [];
      if (d.state !== undefined) {
        next.state = d.state;
        next.activeStates = activeStatePaths(d.state);
      }
      return next;
    default:
      return next;
  }
}

/**
 * The session as it was right after the event with `seq` (inclusive), from the recorded events alone. The events are
 * a log from seq 1 in order; `seq` 0 gives the view before the first event. Throws a RangeError when `seq` is not an
 * integer from 0 to the last seq (callers map it to their own coded error).
 * @example
 * const third = sessionAt(await session.events(), 3);
 * third.state; // e.g. { active: 'classify' }
 */
export function sessionAt(events: readonly FoldableEvent[], seq: number): SessionAt {
  const last = events.length === 0 ? 0 : events[events.length - 1]!.seq;
  if (!Number.isInteger(seq) || seq < 0 || seq > last) throw new RangeError(`seq ${seq} is outside the log (0 to ${last})`);
  let view: SessionAt = EMPTY_SESSION_AT;
  for (const event of events) {
    if (event.seq > seq) break;
    view = foldEvent(view, event);
  }
  return view;
}
