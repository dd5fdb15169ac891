import type { Clock } from './clock.ts';
import type { AnyMachineDefinition } from './definition.ts';
import { FlowingError } from './errors.ts';
import type { RuntimeEvent } from './events.ts';
import { createRecordedCalls } from './inspect/recorded-calls.ts';
import { sessionAt } from './inspect/session-at.ts';
import { applyContextChange } from '@flowing/protocol';
import type { RuntimeLimits } from './limits.ts';
import type { LlmProvider } from './llm/types.ts';
import { createRuntime, type Runtime, type SessionSnapshot } from './runtime.ts';
import { createMemoryStore } from './store/memory.ts';
import type { JournalEntry } from './store/types.ts';
import type { AnyTool } from './tool.ts';

export interface ReplayOptions {
  machine: AnyMachineDefinition;
  /** The recorded log, from seq 1. */
  log: readonly RuntimeEvent[];
  /** The recorded journal (results the log may lack). */
  journal?: readonly JournalEntry[];
  /** For a forked session (its `session.started` names a parent): the parent's log, where the fork started from. */
  parentLog?: readonly RuntimeEvent[];
  clock?: Clock;
  limits?: RuntimeLimits;
  /** Backoff jitter source, as the recording's runtime had it (retry delays are logged). */
  random?: () => number;
}

export interface ReplayResult {
  events: readonly RuntimeEvent[];
  snapshot: SessionSnapshot;
  /** Calls answered from the recording (replaySession) — never real calls. */
  answered: { tools: number; llm: number };
}

/**
 * Plays a recorded session again in a fresh memory runtime WITHOUT side effects: the machine runs, but every tool and
 * model call is answered from the recording (`createRecordedCalls`); no tool's `run` and no model is ever called.
 * The events the log shows arriving from outside are sent again, and the new log is checked against the recording:
 * a call the recording lacks is REPLAY_MISSING_CALL, any other difference NONDETERMINISM naming the first seq.
 * @example
 * const { events } = await replaySession({ machine: orderSupport, log: await session.events() });
 */
export async function replaySession(options: ReplayOptions): Promise<ReplayResult> {
  const recorded = createRecordedCalls({ log: options.log, journal: options.journal, machine: options.machine });
  const result = await playLog(options, { llm: recorded.llm, tools: recorded.tools }, () => {
    const missing = recorded.misses[0];
    if (missing) throw missing;
  });
  return { ...result, answered: { ...recorded.answered } };
}

export interface ReexecuteOptions extends ReplayOptions {
  /** The model to call (default: the scripted provider). */
  llm?: LlmProvider;
  /** Tool implementations that replace the machine's own (default: the machine's real tools). */
  tools?: Readonly<Record<string, AnyTool>>;
}

/**
 * Runs a recorded session's outside events through the machine AGAIN, CALLING ITS TOOLS AND MODEL FOR REAL (a refund
 * tool pays out again): for checking that the code still behaves as recorded, against test doubles or a staging
 * service. Differences are NONDETERMINISM errors naming the first diverging seq. To look at a session without side
 * effects, use `replaySession`.
 */
export async function reexecuteSession(options: ReexecuteOptions): Promise<ReplayResult> {
  const result = await playLog(options, { llm: options.llm, tools: options.tools }, () => {});
  return { ...result, answered: { tools: 0, llm: 0 } };
}

async function playLog(
  options: ReplayOptions,
  calls: { llm?: LlmProvider; tools?: Readonly<Record<string, AnyTool>> },
  checkCalls: () => void,
) {
  const [first] = options.log;
  if (!first || first.type !== 'session.started')
    throw new FlowingError('NONDETERMINISM', 'a replay needs a log that starts with session.started');
  checkVersion(options);
  const runtime = createRuntime({
    machines: [options.machine],
    store: createMemoryStore(),
    llm: calls.llm,
    tools: calls.tools,
    clock: options.clock,
    limits: options.limits,
    random: options.random,
  });
  const session = await startAsRecorded(runtime, options);
  // The replayed log is read and compared a piece at a time: comparing it whole at every outside event costs
  // quadratic time (a 10,000-event session took 40 s).
  const replayed: RuntimeEvent[] = [];
  // Compared with whole contexts: a log recorded before contexts were logged as patches replays the same.
  const recorded = withWholeContexts(options.log);
  const replayedWhole: RuntimeEvent[] = [];
  const whole = wholeContexts();
  let compared = 0;
  const check = async (upTo: number) => {
    checkCalls();
    for (const event of await session.events(replayed.length)) {
      replayed.push(event);
      replayedWhole.push(whole(event));
    }
    compare(recorded, replayedWhole, compared, upTo);
    compared = Math.max(compared, upTo);
  };
  for (const event of options.log) {
    const data = event.data as { payload?: { type: string }; reason?: string };
    if ((event.type === 'state.changed' || event.type === 'transition.rejected') && data.payload) {
      await check(event.seq - 1);
      await session.send(data.payload as never);
    } else if (event.type === 'transition.rejected' && 'payloadSha256' in data) {
      await check(event.seq - 1);
      await carryOver(runtime, event);
    } else if (event.type === 'approval.decided' && typeof (data as { callId?: unknown }).callId === 'string' && !isWithdrawal(data)) {
      // A decision on a call an agent's model proposed takes no transition: it is replayed from its own record.
      await check(event.seq - 1);
      const decided = data as { decision?: string; reason?: string | null };
      await session.send({
        type: decided.decision === 'approved' ? 'APPROVE' : 'REJECT',
        ...(decided.reason ? { reason: decided.reason } : {}),
      } as never);
    } else if (event.type === 'session.cancelled') {
      await check(event.seq - 1);
      await session.cancel(data.reason);
    }
  }
  await check(options.log.length);
  compare(recorded, replayedWhole, compared, Math.max(options.log.length, replayed.length));
  return { events: replayed, snapshot: await session.snapshot() };
}

/** An agent's proposal closed because its state was left (the runtime's doing, not a person's decision). */
function isWithdrawal(data: { reason?: unknown }): boolean {
  return typeof data.reason === 'string' && data.reason.startsWith('withdrawn:');
}

/** Creates the session the way the recording did: anew with its input, or as a fork of its parent at the same event. */
async function startAsRecorded(runtime: Runtime, options: ReplayOptions) {
  const first = options.log[0]!;
  const started = first.data as { input?: unknown; parentId?: unknown; forkedAt?: unknown };
  const ids = { sessionId: first.sessionId, traceId: first.traceId };
  if (typeof started.parentId !== 'string') return runtime.createSession(options.machine, started.input ?? undefined, ids);
  const parentLog = options.parentLog;
  const entered = options.log[1];
  if (!parentLog?.length || parentLog[0]!.sessionId !== started.parentId || entered?.type !== 'state.changed') {
    throw new FlowingError(
      'REPLAY_FORK_NEEDS_PARENT',
      `session '${first.sessionId}' is a fork of '${started.parentId}': pass that session's log as parentLog to replay it`,
      { details: { parentId: started.parentId } },
    );
  }
  const parentStart = parentLog[0]!.data as { machineId?: string; specHash?: string };
  const now = parentLog[parentLog.length - 1]!.at;
  await runtime.store.commit({
    expectedVersion: 0,
    events: parentLog,
    journal: [],
    record: {
      sessionId: started.parentId,
      machineId: parentStart.machineId ?? options.machine.id,
      specHash: parentStart.specHash ?? options.machine.specHash,
      traceId: parentLog[0]!.traceId,
      status: 'waiting',
      version: 1,
      seq: parentLog.length,
      step: 0,
      snapshot: undefined,
      usage: { promptTokens: 0, completionTokens: 0 },
      createdAt: parentLog[0]!.at,
      updatedAt: now,
    },
  });
  // The fork's first context, as a patch over the parent's at the same event: every field, in the fork's order.
  const forkedAt = Number(started.forkedAt);
  const parentContext = (sessionAt(parentLog, forkedAt).context ?? {}) as Record<string, unknown>;
  const forkContext = ((entered.data as { context?: unknown }).context ?? {}) as Record<string, unknown>;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(forkContext)) patch[key] = forkContext[key];
  for (const key of Object.keys(parentContext)) if (!Object.hasOwn(forkContext, key)) patch[key] = null;
  return runtime.forkSession(started.parentId, forkedAt, { ...ids, context: patch });
}

/**
 * A refused event whose payload the log kept only as a hash cannot be sent again: its refusal, which changed nothing
 * but the log, is written into the replay's own store as recorded (the session's next event reloads it from there).
 */
async function carryOver(runtime: Runtime, event: RuntimeEvent): Promise<void> {
  const record = await runtime.store.load(event.sessionId);
  if (!record || record.seq !== event.seq - 1)
    throw new FlowingError(
      'NONDETERMINISM',
      `replay diverges at seq ${event.seq}: the replayed log has ${record?.seq ?? 0} events before it`,
      {
        details: { seq: event.seq },
      },
    );
  await runtime.store.commit({
    expectedVersion: record.version,
    record: { ...record, version: record.version + 1, seq: event.seq, updatedAt: event.at },
    events: [event],
    journal: [],
  });
}

/** Each `state.changed` with the whole context after it (however it was logged), for comparing two logs. */
function withWholeContexts(events: readonly RuntimeEvent[]): RuntimeEvent[] {
  const whole = wholeContexts();
  return events.map(whole);
}

function wholeContexts(): (event: RuntimeEvent) => RuntimeEvent {
  let context: unknown = null;
  return (event) => {
    if (event.type !== 'state.changed') return event;
    context = applyContextChange(context, event.data);
    const { context: _whole, contextPatch: _patch, contextUnset: _unset, ...rest } = event.data as Record<string, unknown>;
    return { ...event, data: { ...rest, context } };
  };
}

/**
 * A log replays only on the version of the machine it was recorded under: another graph would diverge somewhere
 * later with a NONDETERMINISM that hides the cause. A log carried onto another version midway cannot be replayed on
 * either version alone.
 */
function checkVersion(options: ReplayOptions) {
  const recorded = (options.log[0]!.data as { specHash?: unknown }).specHash;
  const machine = options.machine;
  if (typeof recorded === 'string' && recorded !== machine.specHash) {
    throw new FlowingError(
      'REPLAY_VERSION_MISMATCH',
      `session '${options.log[0]!.sessionId}' was recorded under version ${recorded.slice(0, 12)} of '${machine.id}'; the machine given is version ${machine.specHash.slice(0, 12)}. Replay it with the machine generated from that version of the spec`,
      { details: { recordedVersion: recorded, machineVersion: machine.specHash } },
    );
  }
  const migrated = options.log.find((event) => event.type === 'session.migrated');
  if (migrated) {
    const { fromVersion, toVersion } = migrated.data as { fromVersion?: string; toVersion?: string };
    throw new FlowingError(
      'REPLAY_VERSION_MISMATCH',
      `session '${migrated.sessionId}' was carried from version ${String(fromVersion).slice(0, 12)} to ${String(toVersion).slice(0, 12)} at seq ${migrated.seq}; a log that spans two versions of '${machine.id}' is not replayed (fork it after seq ${migrated.seq} to replay the part on the new version)`,
      { details: { seq: migrated.seq, fromVersion, toVersion } },
    );
  }
}

function compare(recorded: readonly RuntimeEvent[], replayed: readonly RuntimeEvent[], from: number, upTo: number) {
  for (let i = from; i < upTo; i++) {
    const a = recorded[i];
    const b = replayed[i];
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      throw new FlowingError(
        'NONDETERMINISM',
        `replay diverges at seq ${i + 1}: recorded ${a?.type ?? 'nothing'}, replayed ${b?.type ?? 'nothing'}`,
        { details: { seq: i + 1, recorded: a, replayed: b } },
      );
    }
  }
}
