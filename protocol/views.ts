/**
 * What the runtime server answers, route by route (see `RuntimeRoutes` in routes.ts for which route answers which).
 * The server's handlers are compiled against these types and the studio's client reads them; nothing else describes
 * the answers.
 */
import type { FlowError } from './errors/flowing-error.ts';
import type { RuntimeEvent, SessionStatus } from './events.ts';
import type { SessionAt } from './session-at.ts';

/** `GET /healthz`: the process answers. */
export interface HealthView {
  ok: true;
}

/** `GET /readyz`: the store answers too (503 with the error shape and `ok: false` while it does not). */
export type ReadinessView = { ok: true; store: string; durability?: string } | ({ ok: false } & FlowError<'SERVER_NOT_READY'>);

/** One machine of `GET /machines`. `spec` is the flow spec the host process handed in (`flowing serve` does), else null. */
export interface RuntimeMachine {
  id: string;
  specHash: string;
  /** The event types the machine declares. */
  events: string[];
  spec: unknown;
}

/** `GET /machines`. */
export interface MachineList {
  machines: RuntimeMachine[];
}

/** One line of `GET /sessions`: enough to show and filter a session without loading its snapshot. */
export interface SessionSummary {
  sessionId: string;
  machineId: string;
  status: SessionStatus;
  version: number;
  seq: number;
  createdAt: number;
  updatedAt: number;
  /** True when an approval was requested and not yet decided. */
  awaitingApproval: boolean;
  /** A child session's parent: the session whose machine invoke started it (absent for any other session). */
  parentId?: string;
  /** Only in a `?stale=true` listing: why the session does not continue on the served version of its machine. */
  stale?: StaleInfo;
}

/** Why a session recorded under another version of its machine does not continue on the served one. */
export interface StaleReason {
  /** `STALE_STATE_REMOVED`, `STALE_STATE_CHANGED`, `STALE_CONTEXT_INVALID`, `STALE_CALL_IN_FLIGHT`, `STALE_TIMER_CHANGED`, `MIGRATION_HOOK_THREW`. */
  code: string;
  message: string;
  /** The state path concerned, as recorded. */
  state?: string;
  /** The context field concerned. */
  field?: string;
}

/** A stale session's versions, where it stands, the reasons, and whether the machine's migration hook carries it over. */
export interface StaleInfo {
  /** The spec hash the session was recorded under. */
  fromVersion: string;
  /** The spec hash served now. */
  toVersion: string;
  /** Active state paths, as recorded. */
  activeStates: string[];
  reasons: StaleReason[];
  /** True when the machine's migration hook carries it over (`flowing migrate`). */
  migratable: boolean;
}

/** `GET /machines/:id/states`: how many sessions still taking events are in each active state path of the machine. */
export interface MachineStateCounts {
  machineId: string;
  /** The version served. */
  specHash: string;
  states: Record<string, number>;
}

/** `GET /sessions`: newest first; `nextCursor` is set when more sessions may follow (pass it as `?cursor=`). */
export interface SessionPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

/** The approval a session waits for. */
export interface PendingApproval {
  approvalId: string;
  state: string;
  tool: string;
  args: unknown;
  argsHash: string;
}

/** `GET /sessions/:id` (and the answer of create, cancel, resolve): where the session stands, without its log. */
export interface SessionView {
  sessionId: string;
  machineId: string;
  /** The version (spec hash) of the machine the session runs, as recorded with it. */
  specHash: string;
  traceId: string;
  status: SessionStatus;
  /** The state value as XState keeps it (a string, or an object for compound and parallel states). */
  state: unknown;
  /** Dotted paths of the active leaf states (`active.idle`); several inside a parallel state. */
  activeStates: string[];
  context: unknown;
  /** The approval the session waits for, when it waits for one. */
  pendingApproval: PendingApproval | null;
  /** Model tokens spent so far. */
  usage: { promptTokens: number; completionTokens: number };
  seq: number;
  step: number;
  error: { code: string; message: string } | null;
  /** A forked session's parent and the seq of the parent's event it was forked at; null for any other session. */
  parentId: string | null;
  forkedAt: number | null;
  /** A child session's parent: the session whose machine invoke started it, the invoking state and call, its depth. */
  invokedBy?: { sessionId: string; state: string; callId: string; depth: number } | null;
  /** The child session a machine invoke of this session waits on, and what that child waits for. */
  waitingOn?: ChildWaitView | null;
}

/** A child session a parent waits on: its state of affairs, its pending approval, and the child it waits on in turn. */
export interface ChildWaitView {
  sessionId: string;
  machineId: string;
  /** The parent's state whose invoke started the child. */
  state: string;
  status: SessionStatus;
  pendingApproval: PendingApproval | null;
  error: { code: string; message: string } | null;
  waitingOn: ChildWaitView | null;
}

/** `GET /sessions/:id/events?after=&limit=`: one page of the log; `nextAfter` is set while more events follow. */
export interface EventPage {
  events: readonly RuntimeEvent[];
  nextAfter?: number;
}

/**
 * The answer of sending an event (`POST /sessions/:id/events`, `/approve`, `/reject`): applied, with the state it
 * settled in and the events it caused (200), or refused with the error shape (`applied: false`, the code's status).
 * A decision repeated with the same `approvalId` answers as the first did, marked `duplicate`.
 */
export type SendAnswer =
  | { applied: true; state: unknown; status: SessionStatus; events: readonly RuntimeEvent[]; duplicate?: true }
  | ({ applied: false } & FlowError);

/**
 * The `result` event that ends `POST /sessions/:id/events/stream` (after the events it caused, which came with ids):
 * the SendAnswer without its events.
 */
export type StreamResult = { applied: true; state: unknown; status: SessionStatus } | ({ applied: false } & FlowError);

/**
 * `GET /sessions/:id/at/:seq`: the session right after the event with `seq` (0 = before the first event), folded from
 * the stored events alone (no tool, no model runs).
 */
export interface SessionAtView extends SessionAt {
  sessionId: string;
  machineId: string;
  /** Seq of the session's last event now. */
  lastSeq: number;
  /** The event at `seq` itself (null for seq 0). */
  event: RuntimeEvent | null;
}

/** `POST /sessions/:id/fork` (201): the new session, with its link to the parent. */
export interface ForkView extends SessionView {
  parentId: string;
  forkedAt: number;
}

/** One XState inspection event of a session, as plain JSON. */
export interface XStateRecord {
  /** Per session, from 1, in the order XState reported them. */
  index: number;
  /** The seq of the last event the session had logged when this happened: it leads to event `afterSeq + 1`. */
  afterSeq: number;
  type: string;
  /** The actor it is about: the session's machine (`root`) or one of its children (tool and model calls). */
  actor: { id: string; systemSessionId: string; root: boolean };
  /** The event sent, processed or that caused a snapshot; with `from` when another actor sent it. */
  event?: { type: string; from?: string };
  /** `@xstate.microstep`: the transitions taken, by source and target state ids. */
  transitions?: Array<{ event: string; source: string; targets: string[] }>;
  /** `@xstate.snapshot`: the actor's status, and for the machine its state value and context. */
  snapshot?: { status: string; value?: unknown; context?: unknown };
  /** `@xstate.action`: the action executed. */
  action?: { type: string };
}

/** `GET /sessions/:id/xstate?afterSeq=`: the records this process kept, and how many older ones it dropped. */
export interface XStateRecords {
  records: XStateRecord[];
  dropped: number;
}
