import { randomUUID } from 'node:crypto';
import { CallDirectory } from './calls/directory.ts';
import { systemClock, xstateClock } from './clock.ts';
import { DEFAULT_WARM_SESSIONS } from './constants.ts';
import { crashPointsFrom } from './crash-points.ts';
import { FlowingError, type FlowError } from './errors.ts';
import { planFork } from './inspect/fork.ts';
import { resolveLimits, RunAdmission, Semaphore } from './limits.ts';
import { createScriptedProvider } from './llm/scripted.ts';
import type { RunHost } from './session/host.ts';
import { ChildSessionRuns } from './session/children.ts';
import { DamagedSessions } from './session/damaged.ts';
import { KeyedQueue } from './session/keyed-queue.ts';
import { LeaseKeeper } from './session/lease.ts';
import { MachineRegistry } from './session/machine-registry.ts';
import type { MachineInfo } from './session/machine-info.ts';
import { RunPool, type RunStart } from './session/run-pool.ts';
import { sessionHandle, type HandleParts } from './session/session-handle.ts';
import { Subscriptions } from './session/subscriptions.ts';
import type { Runtime, RuntimeOptions, Session } from './session/types.ts';
import type { SessionTracer } from './trace/session-tracer.ts';
import type { TracerLike } from './trace/types.ts';
import { createMemoryStore } from './store/memory.ts';
import { deliverMessage, warnUndelivered, type ChannelMessage } from './channels/deliver.ts';
import { ChannelRouter } from './channels/router.ts';
import { startChannels } from './channels/start.ts';
import type { VersionScope } from './migrate/list.ts';
import type { RuntimeEvent } from './events.ts';

export type {
  CancelResult,
  Runtime,
  RuntimeChannels,
  RuntimeOptions,
  Session,
  SessionEvent,
  SessionSnapshot,
  SendOptions,
} from './session/types.ts';

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
  const clock = options.clock ?? systemClock;
  const directory = new CallDirectory();
  const registry = new MachineRegistry(options.machines, directory, options.tools);
  const damaged = new DamagedSessions();
  const subscriptions = new Subscriptions(
    (id, after, limit) => store.readEvents(id, after, limit),
    (id, error) => damaged.note(id, error),
  );
  const router = new ChannelRouter([...registry.byId.values()].map((info) => info.definition));
  // Filled in below: delivering a message needs the runtime it belongs to.
  let self: Runtime | undefined;
  // One receiver's messages are delivered one after another, in the order they were stored.
  const deliveries = new KeyedQueue();
  const trace = options.tracer ? tracing(options.tracer) : undefined;
  const queue = new KeyedQueue();
  const children = new ChildSessionRuns({
    store,
    queue,
    pool: () => pool,
    machine: (machineId) => registry.get(machineId),
    newId,
    cancel: (sessionId, reason) => sessionHandle(parts, sessionId, '').cancel(reason),
  });
  const host: RunHost = {
    store,
    clock,
    limits,
    directory,
    llm: options.llm ?? createScriptedProvider(),
    xstateClock: xstateClock(clock),
    calls: new Semaphore(limits.maxConcurrentCalls),
    crashPoint: crashPointsFrom(process.env.FLOWING_FAULT),
    random: options.random ?? Math.random,
    // With a store that carries messages between processes, a channel no machine of this runtime listens to may have
    // its receiver in another process: the message is stored all the same, and routed where it is received.
    channelTarget: (channel, key) => router.target(channel, key) ?? (store.channels ? {} : undefined),
    // There, the store's commit is the outbox and consumers deliver (see startChannels); here, this runtime does.
    ...(store.channels
      ? {}
      : {
          sendMessages: (from: string, sent: readonly RuntimeEvent[]) => {
            host.crashPoint('channel-sent-before-delivery');
            for (const event of sent) {
              const message = { ...(event.data as Omit<ChannelMessage, 'from'>), from };
              void deliveries.run((event.data as { to: string }).to, () =>
                deliverMessage(self!, router, message).then(
                  (result) => {
                    if (!result.applied) warnUndelivered(message, `${result.code}: ${result.message}`);
                  },
                  (error: unknown) => warnUndelivered(message, error instanceof Error ? error.message : String(error)),
                ),
              );
            }
          },
        }),
    deliver: trace
      ? (id, events) => {
          subscriptions.deliver(id, events);
          trace((tracer) => tracer.events(events));
        }
      : (id, events) => subscriptions.deliver(id, events),
    ...(trace ? { onQuiet: (id: string) => trace((tracer) => tracer.quiet(id, clock.now())) } : {}),
    machine: (machineId) => registry.get(machineId),
    throwsOf: (info) => registry.throwsOf(info),
    children: options.childSessions ?? children,
    onTurnEnd: (record) => children.turnEnded(record),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(options.migrations ? { migrations: (machineId: string) => options.migrations?.[machineId] } : {}),
  };
  const admission = new RunAdmission(limits.maxConcurrentCalls, limits.overflow);
  const leases = store.leases ? new LeaseKeeper(store.leases, options.lease) : undefined;
  const pool = new RunPool(host, store, queue, leases, options.warmSessions ?? DEFAULT_WARM_SESSIONS);
  const parts: HandleParts = { store, queue, pool, admission, subscriptions, damaged, machine: (machineId) => registry.get(machineId) };
  const versions: VersionScope = {
    store,
    machine: (machineId) => registry.byId.get(machineId),
    hook: (machineId) => options.migrations?.[machineId],
  };

  /** Starts a new session's run under the admission limit and throws what made it fail, naming a stored session. */
  async function start(info: MachineInfo, ids: { sessionId?: string; traceId?: string }, from: RunStart): Promise<Session> {
    const sessionId = ids.sessionId ?? newId();
    const traceId = ids.traceId ?? newId();
    const admitted = admission.enter();
    if ('refusal' in admitted)
      throw new FlowingError(admitted.refusal.code, admitted.refusal.message, { details: admitted.refusal.details });
    await queue
      .run(sessionId, async () => {
        const run = await pool.startRun(info, { sessionId, traceId }, from);
        const failed: FlowError | undefined = run.failed ?? (run.status === 'error' ? run.outcome?.error : undefined);
        // A session that failed after its first commit is stored (its log says what happened): name it.
        if (failed)
          throw new FlowingError(failed.code, failed.message, {
            details: run.version > 0 ? { sessionId, ...(isRecord(failed.details) ? failed.details : {}) } : failed.details,
          });
      })
      .finally(admitted.leave);
    return sessionHandle(parts, sessionId, info.definition.id);
  }

  self = {
    store,
    machines: registry.byId,
    createSession(machine, input, ids = {}) {
      const info = registry.get(typeof machine === 'string' ? machine : machine.id);
      return start(info, ids, { kind: 'create', input }) as never;
    },
    session(sessionId) {
      return sessionHandle(parts, sessionId, '');
    },
    async forkSession(parentId, atSeq, forkOptions = {}) {
      const plan = await planFork(store, (machineId) => registry.get(machineId), parentId, atSeq, forkOptions.context);
      const { info, ...from } = plan;
      return start(info, forkOptions, { kind: 'fork', ...from });
    },
    async resume(sessionId, resumeOptions = {}) {
      const machineId = await queue.run(sessionId, () =>
        pool.withRun(
          sessionId,
          true,
          async (run) => {
            await run.whenQuiet();
            return run.info.definition.id;
          },
          resumeOptions.leaseWaitMs,
        ),
      );
      return sessionHandle(parts, sessionId, machineId);
    },
    // The version tools are imported when first used, so that the cold start of a runtime does not pay for them.
    async staleSessions(query) {
      const { listStaleSessions } = await import('./migrate/list.ts');
      return listStaleSessions(versions, query);
    },
    async migrate(migrateOptions) {
      const { runMigrations } = await import('./migrate/run-migrations.ts');
      const open = (sessionId: string) => queue.run(sessionId, () => pool.withRun(sessionId, false, async () => {}));
      return runMigrations(versions, open, migrateOptions);
    },
    async sessionsByState(machineId) {
      const { countByState } = await import('./migrate/list.ts');
      return countByState(store, registry.get(machineId).definition.id);
    },
    channels: startChannels({ runtime: () => self!, router, store, deliveries, clock }),
  };
  return self;
}

/**
 * Hands work to the session tracer in order, once it is loaded: its module and `@opentelemetry/api` are imported
 * only now, for a runtime given a tracer. A tracer that cannot load or throws is reported once and never reaches a
 * session.
 */
function tracing(tracer: TracerLike): (work: (tracer: SessionTracer) => void) => void {
  let chain: Promise<SessionTracer | undefined> = import('./trace/session-tracer.ts')
    .then((module) => module.createSessionTracer(tracer))
    .catch((error: unknown) => {
      process.emitWarning(`tracing is off: ${(error as Error).message ?? String(error)}`, { code: 'FLOWING_TRACER_UNAVAILABLE' });
      return undefined;
    });
  let warned = false;
  return (work) => {
    chain = chain.then((loaded) => {
      if (!loaded) return undefined;
      try {
        work(loaded);
      } catch (error) {
        if (!warned) process.emitWarning(`a span could not be recorded: ${(error as Error).message}`, { code: 'FLOWING_TRACER_THREW' });
        warned = true;
      }
      return loaded;
    });
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
