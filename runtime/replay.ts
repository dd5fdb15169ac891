import type { Clock } from './clock.ts';
import type { AnyMachineDefinition } from './definition.ts';
import { FlowingError } from './errors.ts';
import type { RuntimeEvent } from './events.ts';
import { createRecordedCalls } from './inspect/recorded-calls.ts';
import type { RuntimeLimits } from './limits.ts';
import type { LlmProvider } from './llm/types.ts';
import { createRuntime, type SessionSnapshot } from './runtime.ts';
import { createMemoryStore } from './store/memory.ts';
import type { JournalEntry } from './store/types.ts';
import type { AnyTool } from './tool.ts';

export interface ReplayOptions {
  machine: AnyMachineDefinition;
  /** The recorded log, from seq 1. */
  log: readonly RuntimeEvent[];
  /** The recorded journal (results the log may lack). */
  journal?: readonly JournalEntry[];
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

async function playLog(options: ReplayOptions, calls: { llm?: LlmProvider; tools?: Readonly<Record<string, AnyTool>> }, checkCalls: () => void) {
  const [first] = options.log;
  if (!first || first.type !== 'session.started') throw new FlowingError('NONDETERMINISM', 'a replay needs a log that starts with session.started');
  const runtime = createRuntime({ machines: [options.machine], store: createMemoryStore(), llm: calls.llm, tools: calls.tools, clock: options.clock, limits: options.limits, random: options.random });
  const input = (first.data as { input?: unknown }).input ?? undefined;
  const session = await runtime.createSession(options.machine, input, { sessionId: first.sessionId, traceId: first.traceId });
  // The replayed log is read and compared a piece at a time: comparing it whole at every outside event costs
  // quadratic time (a 10,000-event session took 40 s).
  const replayed: RuntimeEvent[] = [];
  let compared = 0;
  const check = async (upTo: number) => {
    checkCalls();
    replayed.push(...(await session.events(replayed.length)));
    compare(options.log, replayed, compared, upTo);
    compared = Math.max(compared, upTo);
  };
  for (const event of options.log) {
    const data = event.data as { payload?: { type: string }; reason?: string };
    if ((event.type === 'state.changed' || event.type === 'transition.rejected') && data.payload) {
      await check(event.seq - 1);
      await session.send(data.payload as never);
    } else if (event.type === 'session.cancelled') {
      await check(event.seq - 1);
      await session.cancel(data.reason);
    }
  }
  await check(options.log.length);
  compare(options.log, replayed, compared, Math.max(options.log.length, replayed.length));
  return { events: replayed, snapshot: await session.snapshot() };
}

function compare(recorded: readonly RuntimeEvent[], replayed: readonly RuntimeEvent[], from: number, upTo: number) {
  for (let i = from; i < upTo; i++) {
    const a = recorded[i];
    const b = replayed[i];
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      throw new FlowingError('NONDETERMINISM', `replay diverges at seq ${i + 1}: recorded ${a?.type ?? 'nothing'}, replayed ${b?.type ?? 'nothing'}`, { details: { seq: i + 1, recorded: a, replayed: b } });
    }
  }
}
