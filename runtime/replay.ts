import type { Clock } from './clock.ts';
import type { AnyMachineDefinition } from './definition.ts';
import { FlowingError } from './errors.ts';
import type { RuntimeEvent } from './events.ts';
import type { RuntimeLimits } from './limits.ts';
import type { LlmProvider } from './llm/types.ts';
import { createRuntime, type SessionSnapshot } from './runtime.ts';
import { createMemoryStore } from './store/memory.ts';
import type { AnyTool } from './tool.ts';

export interface ReplayOptions {
  machine: AnyMachineDefinition;
  /** The recorded log, from seq 1. */
  log: readonly RuntimeEvent[];
  llm?: LlmProvider;
  tools?: Readonly<Record<string, AnyTool>>;
  clock?: Clock;
  limits?: RuntimeLimits;
}

/**
 * Runs a recorded session again in a fresh memory runtime, feeding it the events the log shows arriving from
 * outside, and checks the new log against the recording; the first difference is a `NONDETERMINISM` error naming it.
 */
export async function replaySession(options: ReplayOptions): Promise<{ events: readonly RuntimeEvent[]; snapshot: SessionSnapshot }> {
  const [first] = options.log;
  if (!first || first.type !== 'session.started') throw new FlowingError('NONDETERMINISM', 'a replay needs a log that starts with session.started');
  const runtime = createRuntime({ machines: [options.machine], store: createMemoryStore(), llm: options.llm, tools: options.tools, clock: options.clock, limits: options.limits });
  const input = (first.data as { input?: unknown }).input ?? undefined;
  const session = await runtime.createSession(options.machine, input, { sessionId: first.sessionId, traceId: first.traceId });
  for (const event of options.log) {
    const data = event.data as { payload?: { type: string }; reason?: string };
    if ((event.type === 'state.changed' || event.type === 'transition.rejected') && data.payload) {
      await compare(options.log, await session.events(), event.seq - 1);
      await session.send(data.payload as never);
    } else if (event.type === 'session.cancelled') {
      await compare(options.log, await session.events(), event.seq - 1);
      await session.cancel(data.reason);
    }
  }
  const events = await session.events();
  await compare(options.log, events, Math.max(options.log.length, events.length));
  return { events, snapshot: await session.snapshot() };
}

async function compare(recorded: readonly RuntimeEvent[], replayed: readonly RuntimeEvent[], upTo: number) {
  for (let i = 0; i < upTo; i++) {
    const a = recorded[i];
    const b = replayed[i];
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      throw new FlowingError('NONDETERMINISM', `replay diverges at seq ${i + 1}: recorded ${a?.type ?? 'nothing'}, replayed ${b?.type ?? 'nothing'}`, { details: { seq: i + 1, recorded: a, replayed: b } });
    }
  }
}
