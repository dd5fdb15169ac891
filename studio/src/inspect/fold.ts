import { activeStatePaths, type SessionStatus, type WireEvent } from './wire.ts';

/** A tool or model call that started and has no result yet at the folded event. */
export interface PendingCall {
  callId: string;
  kind: 'tool' | 'llm';
  /** Tool name, or the model call's kind (classify, extract, generate, agent). */
  name: string;
  args?: unknown;
  startedAt: number;
  /** 1 for the first attempt; raised by each `tool.retry`. */
  attempt: number;
}

/** The approval a session asked for, and its decision once made. */
export interface ApprovalView {
  approvalId: string;
  state: string;
  tool: string;
  args: unknown;
  decision?: 'approved' | 'rejected';
}

/** A refused event: which event, in which active states, with what code and reason. */
export interface RejectionView {
  seq: number;
  event: string | null;
  states: string[];
  code: string;
  reason: string;
}

/** The session as it was right after one event of its log. */
export interface SessionAt {
  /** The XState state value (a string, or an object for compound and parallel states); null before the first step. */
  state: unknown;
  /** Dotted paths of the active leaf states. */
  activeStates: string[];
  context: unknown;
  status: SessionStatus;
  pendingCalls: PendingCall[];
  approval: ApprovalView | null;
  lastRejection: RejectionView | null;
  /** Seq of the folded event (0 for an empty log). */
  seq: number;
}

/** The view of a session before its first event. */
export const EMPTY_SESSION: SessionAt = Object.freeze({
  state: null, activeStates: [], context: undefined, status: 'running', pendingCalls: [], approval: null, lastRejection: null, seq: 0,
}) as SessionAt;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * Applies one event to the session view (a pure reducer; the input is not changed). Folding a log from EMPTY_SESSION
 * gives what the runtime had at each event, computed from the recorded events alone. The same rules as the runtime's
 * `sessionAt` (runtime/inspect/session-at.ts), which the browser does not import; test/studio/fold-parity.test.ts
 * holds the two to the same answers.
 */
export function applyEvent(view: SessionAt, event: WireEvent): SessionAt {
  const d = event.data;
  const next: SessionAt = { ...view, seq: event.seq };
  switch (event.type) {
    case 'session.started':
      return { ...EMPTY_SESSION, seq: event.seq, context: d.input ?? undefined, status: 'running' };
    case 'state.changed':
      next.state = d.state;
      next.activeStates = activeStatePaths(d.state);
      if ('context' in d) next.context = d.context;
      // Waiting unless a call is in flight; the next event tells more (a call starting, approval, done).
      if (view.status === 'running' || view.status === 'waiting') next.status = view.pendingCalls.length > 0 ? 'running' : 'waiting';
      return next;
    case 'transition.rejected': {
      next.lastRejection = { seq: event.seq, event: typeof d.event === 'string' ? d.event : null, states: Array.isArray(d.states) ? d.states.map(String) : [], code: str(d.code), reason: str(d.reason) };
      // A call's result or a timer no branch takes stops the session for a person (the runtime logs an error next).
      return next;
    }
    case 'tool.started':
    case 'llm.started': {
      const kind = event.type === 'tool.started' ? 'tool' : 'llm';
      const name = kind === 'tool' ? str(d.tool) : str(d.kind);
      next.pendingCalls = [...view.pendingCalls.filter((c) => c.callId !== d.callId), { callId: str(d.callId), kind, name, args: d.args, startedAt: event.at, attempt: 1 }];
      if (view.status === 'waiting') next.status = 'running';
      return next;
    }
    case 'tool.retry':
      next.pendingCalls = view.pendingCalls.map((c) => (c.callId === d.callId ? { ...c, attempt: typeof d.attempt === 'number' ? d.attempt : c.attempt + 1 } : c));
      // A person asked for the call to run again: the session goes on.
      if (d.resolvedBy === 'person' && view.status === 'needs_attention') next.status = 'running';
      return next;
    case 'tool.completed':
    case 'tool.failed':
    case 'llm.completed':
    case 'llm.failed':
      next.pendingCalls = view.pendingCalls.filter((c) => c.callId !== d.callId);
      // Still running: the machine takes the result next (its state.changed says whether it then waits). A person's
      // answer for a call with an unknown outcome sets the session going again.
      if (d.resolvedBy === 'person' && view.status === 'needs_attention') next.status = 'running';
      return next;
    case 'tool.unknown_outcome':
      // Only a call of the machine itself stops the session; a timed-out call fails on (reason), an agent's call is
      // told to the agent (its id has a `/<n>` suffix).
      if (d.reason === undefined && !str(d.callId).includes('/')) next.status = 'needs_attention';
      else next.pendingCalls = view.pendingCalls.filter((c) => c.callId !== d.callId);
      return next;
    case 'approval.requested':
      next.approval = { approvalId: str(d.approvalId), state: str(d.state), tool: str(d.tool), args: d.args };
      return next;
    case 'approval.decided':
      if (view.approval && view.approval.approvalId === d.approvalId) {
        next.approval = { ...view.approval, decision: d.decision === 'approved' ? 'approved' : 'rejected' };
      }
      return next;
    case 'error':
      if (d.recoverable === false) next.status = 'error';
      // A refused call result or timer (the rejected event is an `xstate.` one) leaves the session for a person.
      else if (view.lastRejection && view.lastRejection.seq === event.seq - 1 && view.lastRejection.event?.startsWith('xstate.')) next.status = 'needs_attention';
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
 * The session as it was right after `events[index]` (array index, inclusive), from the recorded events alone: no
 * network, no tool, no model. `index` below 0 gives the view before the first event; past the end, the last event.
 * @example
 * const atThird = sessionAt(events, 2); // after seq 3 in a log starting at 1
 */
export function sessionAt(events: readonly WireEvent[], index: number): SessionAt {
  let view = EMPTY_SESSION;
  const last = Math.min(index, events.length - 1);
  for (let i = 0; i <= last; i++) view = applyEvent(view, events[i]!);
  return view;
}
