import { randomUUID } from 'node:crypto';
import { provideRuntimeActors } from './calls/provide.ts';
import { systemClock, type Clock } from './clock.ts';
import type { AnyMachineDefinition, EventOf } from './definition.ts';
import { DEFAULT_WARM_SESSIONS } from './constants.ts';
import { FlowingError } from './errors.ts';
import type { RuntimeEvent } from './events.ts';
import { resolveLimits, RunAdmission, Semaphore, type RuntimeLimits } from './limits.ts';
import { planFork } from './inspect/fork.ts';
import { createScriptedProvider } from './llm/scripted.ts';
import type { LlmProvider } from './llm/types.ts';
import type { RunHost, XStateInspector } from './session/host.ts';
import { LeaseKeeper, type HeldLease, type LeaseOptions } from './session/lease.ts';
import { analyzeMachine, type MachineInfo } from './session/machine-info.ts';
import { SessionRun, type SendResult } from './session/run.ts';
import { Subscriptions, type EventListener, type SubscriptionErrorListener } from './session/subscriptions.ts';
import { TimerWakeups } from './session/timers.ts';
import { createMemoryStore } from './store/memory.ts';
import type { ApprovalRecord, SessionStatus, SessionStore } from './store/types.ts';
import type { AnyTool } from './tool.ts';

/**
 * A random UUID as one flat string. Node builds `randomUUID()` by concatenation, a rope of about fifteen pieces
 * (some 450 bytes); the id is kept in every stored record and event, so it is flattened at once (reading it as a
 * number makes V8 do that) and an idle session keeps a single 36-character string.
 */
function newId(): string {
  const id = randomUUID();
  void Number(id);
  return id;
}

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
  createSession<TDef extends AnyMachineDefinition>(machine: TDef | string, input?: unknown, options?: { sessionId?: string; traceId?: string }): Promise<Session<SessionEvent<TDef>>>;
  /**
   * Starts a new session at the state and context session `parentId` had right after event `atSeq` (context fields
   * patched by `options.context`, checked against the schema); resolves when it is quiet. Nothing of the parent runs
   * again; calls the forked state invokes start in the fork. See `planFork` for what is refused and why.
   */
  forkSession(parentId: string, atSeq: number, options?: { context?: Record<string, unknown>; sessionId?: string; traceId?: string }): Promise<Session>;
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

/**
 * Creates the engine that runs generated machines as sessions with an event log, journaled calls and limits.
 * @example
 * const runtime = createRuntime({ machines: [orderSupport] });
 * const session = await runtime.createSession(orderSupport);
 * await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const store = options.store ?? createMemoryStore();
  const limits = resolveLimits(options.limits);
  const admission = new RunAdmission(limits.maxConcurrentCalls, limits.overflow);
  const machines = new Map<string, MachineInfo>();
  const subscriptions = new Subscriptions((id, after) => store.readEvents(id, after));
  const host: RunHost = {
    store,
    llm: options.llm ?? createScriptedProvider(),
    clock: options.clock ?? systemClock,
    limits,
    calls: new Semaphore(limits.maxConcurrentCalls),
    random: options.random ?? Math.random,
    deliver: (id, events) => subscriptions.deliver(id, events),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    machine(machineId) {
      const info = machines.get(machineId);
      if (!info) throw new FlowingError('UNKNOWN_MACHINE', `no machine '${machineId}' was given to the runtime (known: ${[...machines.keys()].join(', ')})`);
      return info;
    },
  };
  for (const given of options.machines) {
    const tools = { ...given.tools };
    for (const name of Object.keys(tools)) if (options.tools?.[name]) tools[name] = options.tools[name];
    const definition = { ...given, tools };
    let info: MachineInfo | undefined;
    info = analyzeMachine(definition, (machine) => provideRuntimeActors(definition, machine, () => info!));
    machines.set(definition.id, info);
  }

  const leases = store.leases ? new LeaseKeeper(store.leases, options.lease) : undefined;

  /** Makes a run's commits carry the lease's token, and stops the run (writing nothing more) if the lease is lost. */
  function underLease(run: SessionRun, lease: HeldLease | undefined): SessionRun {
    if (!lease) return run;
    run.fence = lease.token;
    lease.onLost((error) => run.abandon(error));
    return run;
  }

  // A session waiting for an `after` timer is woken up by the runtime when it is due, in turn with its other events.
  const wakeups = new TimerWakeups(host.clock, (id) => serialize(id, () => withRun(id, true, (run) => run.fireTimers())));
  host.onCommitted = (record) => wakeups.arm(record.sessionId, record.timers);

  const live = new Map<string, Promise<SessionRun>>();
  /** Operations waiting for a lease another process holds (before they have a run). */
  const leaseWaits = new Map<string, Promise<unknown>>();

  async function takeLease(sessionId: string, options: { create?: boolean; waitMs?: number }): Promise<HeldLease | undefined> {
    if (!leases) return undefined;
    const taking = leases.hold(sessionId, options);
    leaseWaits.set(sessionId, taking);
    try {
      return await taking;
    } finally {
      if (leaseWaits.get(sessionId) === taking) leaseWaits.delete(sessionId);
    }
  }
  const queues = new Map<string, Promise<void>>();

  /** Operations queued or running per session; BUSY is decided on this count, not on the queue's cleanup. */
  const pending = new Map<string, number>();

  function serialize<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    pending.set(sessionId, (pending.get(sessionId) ?? 0) + 1);
    const previous = queues.get(sessionId) ?? Promise.resolve();
    const next = previous.then(fn).finally(() => {
      const left = pending.get(sessionId)! - 1;
      if (left === 0) pending.delete(sessionId);
      else pending.set(sessionId, left);
    });
    const tail = next.then(() => {}, () => {});
    queues.set(sessionId, tail);
    void tail.then(() => {
      if (queues.get(sessionId) === tail) queues.delete(sessionId);
    });
    return next;
  }

  // A few recently quiet runs stay warm so a follow-up event skips restoring the actor; the store stays the truth.
  const warm = new Map<string, SessionRun>();
  const warmLimit = options.warmSessions ?? DEFAULT_WARM_SESSIONS;

  function park(run: SessionRun) {
    // A run with timers is not kept warm: its timer would fire outside the session's turn; the wake-up fires it.
    if (warmLimit <= 0 || run.stopped || run.status !== 'waiting' || run.hasTimers) return run.dispose();
    run.park();
    warm.delete(run.sessionId);
    warm.set(run.sessionId, run);
    if (warm.size > warmLimit) {
      const [oldest] = warm.values();
      warm.delete(oldest!.sessionId);
      oldest!.dispose();
    }
  }

  async function open(sessionId: string, start: boolean): Promise<SessionRun> {
    const record = await store.load(sessionId);
    if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${store.name} store`);
    if (record.timers) wakeups.arm(sessionId, record.timers);
    const parked = warm.get(sessionId);
    if (parked) {
      warm.delete(sessionId);
      if (parked.version === record.version && start) return parked;
      parked.dispose();
    }
    const info = host.machine(record.machineId);
    if (record.specHash !== info.definition.specHash) {
      throw new FlowingError('SPEC_CHANGED', `session '${sessionId}' was created from another version of '${record.machineId}' (spec hash ${record.specHash.slice(0, 12)}, now ${info.definition.specHash.slice(0, 12)}); it is not continued on the new graph`);
    }
    const active = record.status === 'running' || record.status === 'waiting';
    // Only a session stopped mid-run can have calls in flight; idle ones never need the journal.
    const journal = record.status === 'running' ? await store.readJournal(sessionId) : [];
    return SessionRun.restore(host, info, record, journal, start && active);
  }

  async function withRun<T>(sessionId: string, start: boolean, fn: (run: SessionRun) => Promise<T>, leaseWaitMs?: number): Promise<T> {
    // Across processes, the lease is what serialises a session's steps; it is taken before the record is read.
    const lease = await takeLease(sessionId, leaseWaitMs === undefined ? {} : { waitMs: leaseWaitMs });
    const opening = open(sessionId, start).then((run) => underLease(run, lease));
    live.set(sessionId, opening);
    let run: SessionRun | undefined;
    try {
      run = await opening;
      return await fn(run);
    } finally {
      if (run) {
        await run.whenQuiet();
        await run.flush();
        park(run);
      }
      if (live.get(sessionId) === opening) live.delete(sessionId);
      await lease?.release();
    }
  }

  function handle<TEvent extends { type: string }>(sessionId: string, machineId: string): Session<TEvent> {
    return {
      id: sessionId,
      machineId,
      send(event, sendOptions = {}) {
        if (sendOptions.queue === false && pending.has(sessionId)) {
          const current = live.get(sessionId);
          const refusal = { code: 'BUSY', message: 'another event of this session is being applied; retry later or send with queue: true' };
          if (current) return current.then((run) => run.refuse(event, refusal));
          return serialize(sessionId, () => withRun(sessionId, false, (run) => run.refuse(event, refusal)));
        }
        const admitted = admission.enter();
        if ('refusal' in admitted) return Promise.resolve({ applied: false as const, ...admitted.refusal });
        return serialize(sessionId, () => withRun(sessionId, true, async (run) => {
          await run.whenQuiet();
          return run.send(event);
        })).finally(admitted.leave);
      },
      async snapshot() {
        const current = live.get(sessionId);
        if (current) await (await current).flush();
        const record = await store.load(sessionId);
        if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${store.name} store`);
        const snapshot = (record.snapshot ?? {}) as { value?: unknown; context?: unknown };
        return {
          sessionId, machineId: record.machineId, traceId: record.traceId, status: record.status, state: snapshot.value ?? null,
          context: snapshot.context ?? null, seq: record.seq, step: record.step, version: record.version, usage: record.usage,
          ...(record.approval ? { approval: record.approval } : {}), ...(record.error ? { error: record.error } : {}),
          ...(record.fork ? { fork: { parentId: record.fork.parentId, forkedAt: record.fork.forkedAt } } : {}),
        };
      },
      events(fromSeq = 0) {
        return store.readEvents(sessionId, fromSeq);
      },
      subscribe(fromSeq, listener, onError) {
        const stop = subscriptions.subscribe(sessionId, fromSeq, listener, onError);
        // A store shared between processes also feeds what the others commit; repeats of local deliveries are dropped by seq.
        const unfollow = store.follow?.(sessionId, fromSeq, (events) => subscriptions.deliver(sessionId, events));
        return () => {
          stop();
          unfollow?.();
        };
      },
      async cancel(reason = 'cancelled by the caller') {
        for (;;) {
          const current = live.get(sessionId);
          if (current) return (await current).cancel(reason);
          const waiting = leaseWaits.get(sessionId);
          if (waiting) {
            await waiting.catch(() => {});
            continue;
          }
          if (!pending.has(sessionId)) break;
          // An operation (createSession, send) was queued a moment ago and opens its run within a tick; queueing
          // behind it instead would wait until that run is quiet, which a call that never returns makes never.
          await new Promise((resolve) => setImmediate(resolve));
        }
        return serialize(sessionId, () => withRun(sessionId, false, (run) => run.cancel(reason)));
      },
    };
  }

  return {
    store,
    machines,
    async createSession(machine, input, sessionOptions = {}) {
      const info = host.machine(typeof machine === 'string' ? machine : machine.id);
      const sessionId = sessionOptions.sessionId ?? newId();
      const traceId = sessionOptions.traceId ?? newId();
      const admitted = admission.enter();
      if ('refusal' in admitted) throw new FlowingError(admitted.refusal.code, admitted.refusal.message, { details: admitted.refusal.details });
      await serialize(sessionId, async () => {
        const lease = await takeLease(sessionId, { create: true });
        let run: SessionRun;
        try {
          run = underLease(SessionRun.create(host, info, { sessionId, traceId }, input), lease);
        } catch (error) {
          await lease?.release();
          throw error;
        }
        const running = Promise.resolve(run);
        live.set(sessionId, running);
        try {
          await run.whenQuiet();
          await run.flush();
        } finally {
          park(run);
          if (live.get(sessionId) === running) live.delete(sessionId);
          await lease?.release();
        }
        const failed = run.failed ?? (run.status === 'error' ? run.error : undefined);
        // A session that failed after its first commit is stored (its log says what happened): name it.
        if (failed) throw new FlowingError(failed.code, failed.message, { details: run.version > 0 ? { sessionId, ...(isRecord(failed.details) ? failed.details : {}) } : failed.details });
      }).finally(admitted.leave);
      return handle(sessionId, info.definition.id);
    },
    session(sessionId) {
      return handle(sessionId, '');
    },
    async forkSession(parentId, atSeq, forkOptions = {}) {
      const plan = await planFork(store, (machineId) => host.machine(machineId), parentId, atSeq, forkOptions.context);
      const sessionId = forkOptions.sessionId ?? newId();
      const traceId = forkOptions.traceId ?? newId();
      // A fork starts a run like a new session does: admitted under the same limit.
      const admitted = admission.enter();
      if ('refusal' in admitted) throw new FlowingError(admitted.refusal.code, admitted.refusal.message, { details: admitted.refusal.details });
      await serialize(sessionId, async () => {
        const lease = await takeLease(sessionId, { create: true });
        let run: SessionRun;
        try {
          run = underLease(SessionRun.fork(host, plan.info, { sessionId, traceId }, plan), lease);
        } catch (error) {
          await lease?.release();
          throw error;
        }
        const running = Promise.resolve(run);
        live.set(sessionId, running);
        try {
          await run.whenQuiet();
          await run.flush();
        } finally {
          park(run);
          if (live.get(sessionId) === running) live.delete(sessionId);
          await lease?.release();
        }
        const failed = run.failed ?? (run.status === 'error' ? run.error : undefined);
        if (failed) throw new FlowingError(failed.code, failed.message, { details: run.version > 0 ? { sessionId, ...(isRecord(failed.details) ? failed.details : {}) } : failed.details });
      }).finally(admitted.leave);
      return handle(sessionId, plan.info.definition.id);
    },
    async resume(sessionId, resumeOptions = {}) {
      const machineId = await serialize(sessionId, () => withRun(sessionId, true, async (run) => {
        await run.whenQuiet();
        return run.info.definition.id;
      }, resumeOptions.leaseWaitMs));
      return handle(sessionId, machineId);
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
