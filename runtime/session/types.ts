import type { Clock } from '../clock.ts';
import type { ChildSessions } from '../calls/context.ts';
import type { AnyMachineDefinition, EventOf } from '../definition.ts';
import type { RuntimeEvent } from '../events.ts';
import type { RuntimeLimits } from '../limits.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { ApprovalRecord, ParentLink, SessionStatus, SessionStore } from '../store/types.ts';
import type { AnyTool } from '../tool.ts';
import type { AnyMigrationHook } from '../migrate/hook.ts';
import type { TracerLike } from '../trace/types.ts';
import type { StaleSession } from '../migrate/list.ts';
import type { MigrationReport } from '../migrate/run-migrations.ts';
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
  /**
   * Migration hooks by machine id (each machine's `migrate` export of its `.impl.ts`): a session recorded under an
   * older version that does not fit the served one as it is gets carried over by its machine's hook when it opens.
   */
  migrations?: Readonly<Record<string, AnyMigrationHook>>;
  /**
   * An OpenTelemetry tracer (`trace.getTracer('my-service')` of `@opentelemetry/api`, an optional peer): each session
   * turn, state, tool call and model call becomes a span, built from the committed log, under the log's trace id.
   * Without one, nothing of tracing is loaded.
   */
  tracer?: TracerLike;
  /**
   * @internal What machine invokes start instead of real child sessions: `flowing test` answers them from a
   * recording (runtime/testing), as it answers tool and model calls.
   */
  childSessions?: ChildSessions;
}

/** The events a session of this machine accepts; a plain `{ type }` record for machines given by id. */
export type SessionEvent<TDef> = string extends EventOf<TDef>['type'] ? { type: string; [key: string]: unknown } : EventOf<TDef>;

/** What `session.snapshot()` returns: the stored state of a session. */
export interface SessionSnapshot {
  sessionId: string;
  machineId: string;
  /** The version (spec hash) of the machine the session runs. */
  specHash: string;
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
  /**
   * An id for this event (1-128 printable ASCII characters), e.g. a retry's: sent again with the same event, it is not
   * applied again and the first result is answered, marked `duplicate`; with another event, it is refused with
   * IDEMPOTENCY_KEY_REUSED. A session remembers its last EVENT_IDS_KEPT (64) ids.
   */
  eventId?: string;
  /** Set by channel delivery: the message this event carries, logged as `channel.received` when it is applied. */
  via?: { channel: string; from: string; messageId: string };
}

/** The answer of `session.cancel`: cancelled now, or refused because the session had already finished. */
export type CancelResult = { cancelled: true } | { cancelled: false; code: string; message: string };

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
  /**
   * Aborts in-flight calls and ends the session with status `cancelled`. A session already finished (done, error,
   * cancelled) is left as it is and the answer says why (SESSION_FINISHED, SESSION_CANCELLED); nothing is logged.
   */
  cancel(reason?: string): Promise<CancelResult>;
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
  /**
   * Sessions recorded under another version of their machine that do not continue on the served one as they are,
   * each with the reasons and whether the machine's migration hook carries it over. Sessions that fit are not listed.
   */
  staleSessions(query?: { machineId?: string; limit?: number }): Promise<StaleSession[]>;
  /**
   * Carries every session of an older version that fits (as it is, or through its machine's hook) onto the served
   * version, logging `session.migrated` with both versions; `dryRun` writes nothing and reports what would happen.
   */
  migrate(options?: { dryRun?: boolean; machineId?: string }): Promise<MigrationReport>;
  /** How many sessions still taking events are in each active state path of a machine. */
  sessionsByState(machineId: string): Promise<Record<string, number>>;
  readonly store: SessionStore;
  readonly machines: ReadonlyMap<string, MachineInfo>;
  /** Receiving the channel messages of the machines that listen (see RuntimeChannels). */
  readonly channels?: RuntimeChannels;
}

/**
 * How a runtime receives channel messages. On a store shared between processes (Redis) it consumes the channel
 * streams of its listening machines until stopped; on any other store, `recovered` resolves with the number of
 * messages that a crash had kept from their receiver and that were applied at start.
 */
export interface RuntimeChannels {
  readonly recovered: Promise<number>;
  /** Stops consuming (the store's close stops it too); resolves once the messages being delivered are settled. */
  stop(): Promise<void>;
}

/** The answer of `session.send`: applied (with the state it settled in and the events it caused) or refused with a code. */
export type SendResult = (
  | { applied: true; state: unknown; status: SessionStatus; events: readonly RuntimeEvent[]; duplicate?: true }
  | { applied: false; code: string; message: string; details?: unknown }
) & {
  /** Set when the event went to the child session this session waits on (an APPROVE or REJECT for the child's approval). */
  forwardedTo?: string;
};
