import type { Clock } from '../clock.ts';
import type { AnyMachineDefinition, EventOf } from '../definition.ts';
import type { RuntimeEvent } from '../events.ts';
import type { RuntimeLimits } from '../limits.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { ApprovalRecord, ParentLink, SessionStatus, SessionStore } from '../store/types.ts';
import type { AnyTool } from '../tool.ts';
import type { XStateInspector } from './host.ts';
import type { LeaseOptions } from './lease.ts';
import type { MachineInfo } from './machine-info.ts';
import type { EventListener, SubscriptionErrorListener } from './subscriptions.ts';

export interface RuntimeOptions {
  machines: readonly AnyMachineDefinition[];
  /** Default: a new memory store. */
  store?: SessionStore;
  /** Default: the scripted (offline, not a model) provider. */
  llm?: LlmProvider;
  limits?: RuntimeLimits;
  clock?: Clock;
  /** Tool implementations that replace the machines' tools of the same name (e.g. a staging service). */
  tools?: Readonly<Record<string, AnyTool>>;
  /** Source of backoff jitter, [0, 1). */
  random?: () => number;
  /** Quiet sessions kept as live actors for a quick next event (default 8); all others are stored snapshots only. */
  warmSessions?: number;
  /** With a store that has leases (Redis): how long a step waits for a session another process is stepping. */
  lease?: LeaseOptions;
  /**
   * Hears XState's own inspection events of every session's actor system (the root machine and its child actors:
   * `@xstate.actor`, `@xstate.event`, `@xstate.microstep`, `@xstate.snapshot`, `@xstate.action`), each with the session
   * and the seq of its log it happened after. For the low level: `createXStateTrace()` keeps them for the inspector;
   * an `@statelyai/inspect` inspector takes them as `(event) => inspector.inspect.next(event)`. One that throws is
   * reported once per session (process warning FLOWING_INSPECTOR_THREW) and never reaches the session.
   */
  inspect?: XStateInspector;
}

/** The events a session of this machine accepts; a plain `{ type }` record for machines given by id. */
export type SessionEvent<TDef> = string extends EventOf<TDef>['type'] ? { type: string; [key: string]: unknown } : EventOf<TDef>;

/** What `session.snapshot()` returns: the stored state of a session. */
export interface SessionSnapshot {
  sessionId: string;
  machineId: string;
  traceId: string;
  status: SessionStatus;
  state: unknown;
  context: unknown;
  seq: number;
  step: number;
  version: number;
  usage: { promptTokens: number; completionTokens: number };
  approval?: ApprovalRecord;
  error?: { code: string; message: string };
  /** Set on a session forked from another one: the parent and the event of its log the fork started from. */
  fork?: { parentId: string; forkedAt: number };
  /** Set on a child session: the session whose machine invoke started it, the invoking state and call, its depth. */
  invokedBy?: ParentLink;
  /** Set while a machine invoke of this session waits for its child: the child and what it waits for. */
  waitingOn?: ChildWait;
}

/** A child session a parent waits on, and what the child waits for (its approval, its error, or its own child). */
export interface ChildWait {
  sessionId: string;
  machineId: string;
  /** The parent's state whose invoke started the child. */
  state: string;
  status: SessionStatus;
  approval?: ApprovalRecord;
  error?: { code: string; message: string };
  waitingOn?: ChildWait;
}

export interface SendOptions {
  /** Wait behind an event being applied (default), or refuse with BUSY. */
  queue?: boolean;
}

/** A handle on one session; holding it costs nothing in the runtime. */
export interface Session<TEvent extends { type: string } = { type: string; [key: string]: unknown }> {
  readonly id: string;
  readonly machineId: string;
  /** Applies an event and waits until the session is quiet (waiting, finished, failed or cancelled). */
  send(event: TEvent, options?: SendOptions): Promise<SendResult>;
  snapshot(): Promise<SessionSnapshot>;
  /** Stored events with `seq > fromSeq`. */
  events(fromSeq?: number): Promise<readonly RuntimeEvent[]>;
  /**
   * Every event with `seq > fromSeq`, stored or future, once and in order; returns the unsubscribe function.
   * `onError` hears once if the stored events cannot be read (SUBSCRIPTION_FAILED); the subscription is then closed.
   */
  subscribe(fromSeq: number, listener: EventListener, onError?: SubscriptionErrorListener): () => void;
  /** Aborts in-flight calls and ends the session with status `cancelled`. */
  cancel(reason?: string): Promise<void>;
}

export interface Runtime {
  createSession<TDef extends AnyMachineDefinition>(
    machine: TDef | string,
    input?: unknown,
    options?: { sessionId?: string; traceId?: string },
  ): Promise<Session<SessionEvent<TDef>>>;
  /**
   * Starts a new session at the state and context session `parentId` had right after event `atSeq` (context fields
   * patched by `options.context`, checked against the schema); resolves when it is quiet. Nothing of the parent runs
   * again; calls the forked state invokes start in the fork. See `planFork` for what is refused and why.
   */
  forkSession(
    parentId: string,
    atSeq: number,
    options?: { context?: Record<string, unknown>; sessionId?: string; traceId?: string },
  ): Promise<Session>;
  /** A handle on a stored session (no I/O until used). */
  session(sessionId: string): Session;
  /**
   * Restores a stored session and lets calls that were in flight finish from the journal; resolves when it is quiet.
   * With leases, `leaseWaitMs` bounds the wait for another process stepping it (then SESSION_LEASED).
   */
  resume(sessionId: string, options?: { leaseWaitMs?: number }): Promise<Session>;
  readonly store: SessionStore;
  readonly machines: ReadonlyMap<string, MachineInfo>;
}

/** The answer of `session.send`: applied (with the state it settled in and the events it caused) or refused with a code. */
export type SendResult = (
  | { applied: true; state: unknown; status: SessionStatus; events: readonly RuntimeEvent[] }
  | { applied: false; code: string; message: string; details?: unknown }
) & {
  /** Set when the event went to the child session this session waits on (an APPROVE or REJECT for the child's approval). */
  forwardedTo?: string;
};
