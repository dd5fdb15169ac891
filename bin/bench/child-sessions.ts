/**
 * What a child session costs: sessions that make the same two tool calls, either inline in a compound state of one
 * machine or in a child session its parent invokes. Instantaneous idempotent tools, memory store; rounds interleave
 * the two shapes and the medians of the rounds are printed, in µs of wall time per session.
 *
 *   node --conditions=@flowing/source --import tsx bin/bench/child-sessions.ts [sessions=2000] [rounds=5]
 */
import { fileURLToPath } from 'node:url';
import { setup } from 'xstate';
import { z } from 'zod';
import { createRuntime, defineMachine, defineTool, fromMachine, fromTool, type AnyMachineDefinition } from '@flowing/runtime';
import { FlowSpecSchema, type FlowSpecInput } from '@flowing/spec';
import { median } from './stats.ts';

const step = defineTool({
  name: 'step',
  description: 'answers at once',
  idempotent: true,
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  run: async (input) => ({ n: input.n + 1 }),
});

function define(spec: FlowSpecInput, machine: Parameters<typeof defineMachine>[0]['machine']): AnyMachineDefinition {
  return defineMachine({ id: spec.id, specHash: spec.id, spec: FlowSpecSchema.parse(spec), machine, tools: { step } });
}

const twoSteps = {
  initial: 'first',
  states: {
    first: { invoke: { id: 'first', src: 'tool.step' as const, input: () => ({ args: { n: 1 } }), onDone: 'second' } },
    second: { invoke: { id: 'second', src: 'tool.step' as const, input: () => ({ args: { n: 2 } }), onDone: 'done' } },
    done: { type: 'final' as const },
  },
};
const twoStepsSpec = {
  initial: 'first',
  states: {
    first: { invoke: { tool: 'step', input: { n: '1' }, onDone: 'second', onError: 'done' } },
    second: { invoke: { tool: 'step', input: { n: '2' }, onDone: 'done', onError: 'done' } },
    done: { type: 'final' as const },
  },
};

/** One machine: a compound state makes the two calls, then the machine ends. */
const inline = define(
  { specVersion: 1, id: 'inline', initial: 'work', states: { work: { ...twoStepsSpec, onDone: 'finished' }, finished: { type: 'final' } } },
  setup({ actors: { 'tool.step': fromTool(step) } }).createMachine({
    id: 'inline',
    initial: 'work',
    states: { work: { ...twoSteps, onDone: 'finished' }, finished: { type: 'final' } },
  }),
);

/** The same calls in a child session: `parent` invokes `worker`, which makes them and returns. */
const worker = define(
  { specVersion: 1, id: 'worker', output: {}, ...twoStepsSpec, states: { ...twoStepsSpec.states, done: { type: 'final', output: {} } } },
  setup({ actors: { 'tool.step': fromTool(step) } }).createMachine({
    id: 'worker',
    ...twoSteps,
    states: { ...twoSteps.states, done: { type: 'final', output: () => ({}) } },
    output: ({ event }) => (event as unknown as { output: unknown }).output,
  }),
);
const parent = define(
  {
    specVersion: 1,
    id: 'parent',
    initial: 'call',
    states: { call: { invoke: { machine: 'worker', onDone: 'finished', onError: 'finished' } }, finished: { type: 'final' } },
  },
  setup({ actors: { 'machine.worker': fromMachine<Record<string, never>, Record<string, never>>('worker') } }).createMachine({
    id: 'parent',
    initial: 'call',
    states: { call: { invoke: { id: 'call', src: 'machine.worker', input: () => ({}), onDone: 'finished' } }, finished: { type: 'final' } },
  }),
);

/** µs of wall time per session for `count` sessions of `machineId`, one after the other, each until it ended. */
async function perSession(machineId: string, count: number): Promise<number> {
  const runtime = createRuntime({ machines: [inline, worker, parent] });
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const session = await runtime.createSession(machineId);
    if (i === 0 && (await session.snapshot()).status !== 'done') throw new Error(`a session of '${machineId}' did not end`);
  }
  return ((performance.now() - started) * 1000) / count;
}

export interface ChildSessionsFigure {
  sessions: number;
  rounds: number;
  inlineUsPerSession: number;
  childUsPerSession: number;
  overheadUsPerSession: number;
}

/** Rounds interleave the two shapes after an untimed warm-up; medians of the rounds, µs of wall time per session. */
export async function measureChildSessions(count: number, rounds: number): Promise<ChildSessionsFigure> {
  await perSession('inline', Math.min(200, count));
  await perSession('parent', Math.min(200, count));
  const inlineRounds: number[] = [];
  const childRounds: number[] = [];
  // The shape that goes first alternates, so neither always runs on a cooler (or hotter) process.
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) inlineRounds.push(await perSession('inline', count));
    childRounds.push(await perSession('parent', count));
    if (round % 2 === 1) inlineRounds.push(await perSession('inline', count));
  }
  const inlineUs = median(inlineRounds);
  const childUs = median(childRounds);
  return {
    sessions: count,
    rounds,
    inlineUsPerSession: Math.round(inlineUs),
    childUsPerSession: Math.round(childUs),
    overheadUsPerSession: Math.round(childUs - inlineUs),
  };
}

// Run directly: `[sessions] [rounds]`; from `npm run bench` (runChild): a JSON config `{ sessions, rounds }`.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const config = process.argv[2]?.startsWith('{') ? (JSON.parse(process.argv[2]) as { sessions: number; rounds: number }) : undefined;
  const figure = await measureChildSessions(
    config?.sessions ?? Number(process.argv[2] ?? 2000),
    config?.rounds ?? Number(process.argv[3] ?? 5),
  );
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}
