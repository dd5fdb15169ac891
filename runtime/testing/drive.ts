import { systemClock } from '../clock.ts';
import type { AnyMachineDefinition } from '../definition.ts';
import type { RuntimeEvent } from '../events.ts';
import type { RuntimeLimits } from '../limits.ts';
import type { LlmProvider } from '../llm/types.ts';
import { createRuntime } from '../runtime.ts';
import { createMemoryStore } from '../store/memory.ts';
import type { AnyTool } from '../tool.ts';
import type { CaseInput, RecordedCall } from './case-file.ts';
import { createCaseCalls, type MissingCall } from './case-calls.ts';
import { createReplayClock } from './virtual-clock.ts';

/** Timers a `timer` input fires at most before giving up on the session logging anything (a bound, not a wait). */
const MAX_TIMERS_PER_INPUT = 100;

/** How long a live run waits past a timer's delay for the session to take it. */
const LIVE_TIMER_MARGIN_MS = 5_000;

/** Waits, on the real clock, until the session's log grows or `ms` pass. */
async function waitForLog(session: { events(): Promise<readonly RuntimeEvent[]> }, ms: number): Promise<void> {
  const before = (await session.events().catch(() => [])).length;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if ((await session.events().catch(() => [])).length > before) return;
  }
}

/** What a driven session did. */
export interface DriveResult {
  events: readonly RuntimeEvent[];
  status: string;
  context: unknown;
  missing: MissingCall[];
  unused: RecordedCall[];
  /** Real time the run took. */
  elapsedMs: number;
}

export interface DriveOptions {
  limits?: RuntimeLimits;
  /** Live mode: this provider and these real tools answer instead of the recording (the rest still comes from it). */
  llm?: LlmProvider;
  liveTools?: Readonly<Record<string, AnyTool>>;
  /** Generated paths: no retries and no tool timeouts for the recorded stand-ins (see createCaseCalls). */
  holdTimeouts?: boolean;
  /** Run on the real clock (live mode: real model calls take real time, and their timeouts must be real too). */
  realTime?: boolean;
}

/**
 * Runs one session of `machine` in a fresh memory runtime on simulated time: sends the inputs in order and answers
 * every call from `calls` (never for real, unless live options say so). A `timer` input lets the session's next timer
 * fire (on simulated time) and waits until the session has taken it. Nothing it does leaves the process.
 */
export async function driveSession(
  machine: AnyMachineDefinition,
  input: unknown,
  inputs: readonly CaseInput[],
  calls: readonly RecordedCall[],
  options: DriveOptions = {},
): Promise<DriveResult> {
  const began = performance.now();
  // Parallel calls get their answers in the recorded order, as they did when the session was recorded (live mode
  // answers from real services, whose timing nobody controls).
  const recorded = createCaseCalls(calls, machine.tools, { ordered: !options.realTime, holdTimeouts: options.holdTimeouts });
  const unblock = () => recorded.release();
  const virtual = createReplayClock(0);
  const clock = options.realTime ? { runUntil: <T>(work: Promise<T>, _what: string, _unblock?: () => boolean) => work } : virtual;
  const runtime = createRuntime({
    machines: [machine],
    store: createMemoryStore(),
    clock: options.realTime ? systemClock : virtual,
    random: () => 0.5,
    warmSessions: 1,
    llm: options.llm ?? recorded.llm,
    tools: { ...recorded.tools, ...options.liveTools },
    childSessions: recorded.children,
    limits: options.limits,
  });
  const sessionId = 'replay';
  const session = runtime.session(sessionId);
  try {
    await clock.runUntil(
      runtime.createSession(machine, input ?? undefined, { sessionId, traceId: 'replay' }),
      'starting the session',
      unblock,
    );
  } catch (error) {
    if ((error as { code?: string }).code === 'REPLAY_STUCK') throw error;
    // A session that fails while starting is stored with its log: the comparison shows what happened.
  }
  const tolerateMissing = (work: Promise<unknown>) =>
    work.then(
      () => undefined,
      (error) => {
        if ((error as { code?: string }).code === 'SESSION_NOT_FOUND') return; // never started: later inputs have nowhere to go
        throw error;
      },
    );
  for (const [i, step] of inputs.entries()) {
    const what = `input ${i + 1} (${step.type === 'event' ? step.event.type : step.type === 'timer' ? `after ${step.delay}` : 'cancel'})`;
    if (step.type === 'timer') {
      if (options.realTime) {
        // Live runs are on the real clock: wait for the session to log the timer's transition (delay + a margin).
        const delay = Number(step.delay);
        if (Number.isFinite(delay)) await waitForLog(session, delay + LIVE_TIMER_MARGIN_MS);
        continue;
      }
      // A quiet session has no actor running: its timer is the runtime's wake-up on the clock. Fire timers in time
      // order until the session has logged something (a wake-up that finds nothing due re-arms and fires again);
      // resume() queues behind the wake-up and settles when the session is quiet again.
      const before = (await tolerateMissing(session.events().then((events) => events.length))) ?? 0;
      for (let fired = 0; fired < MAX_TIMERS_PER_INPUT && virtual.fireNext(); fired++) {
        await virtual.runUntil(tolerateMissing(runtime.resume(sessionId)), what, unblock);
        const after = await session.events().then(
          (events) => events.length,
          () => before,
        );
        if (after > before) break;
      }
      continue;
    }
    const work = step.type === 'cancel' ? session.cancel(step.reason) : session.send(step.event);
    await clock.runUntil(tolerateMissing(work), what, unblock);
  }
  let events: readonly RuntimeEvent[] = [];
  let status = 'error';
  let context: unknown = null;
  try {
    const snapshot = await session.snapshot();
    events = await session.events();
    status = snapshot.status;
    context = snapshot.context;
  } catch {
    // nothing was stored: the machine failed before its first commit
  }
  return { events, status, context, missing: recorded.missing, unused: recorded.unused(), elapsedMs: performance.now() - began };
}
