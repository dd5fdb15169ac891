import { createHash } from 'node:crypto';
import { assign, setup, type AnyStateMachine } from 'xstate';
import { z } from 'zod';
import { defineMachine, defineTool, fromLlm, fromTool, type AnyMachineDefinition, type AnyTool, type FlowError } from '@flowing/runtime';
import { FlowSpecSchema, type FlowSpecInput } from '@flowing/spec';

/** Bundles a hand-written machine of the generated shape with its spec. */
export function defineTestMachine(spec: FlowSpecInput, machine: AnyStateMachine, tools: AnyTool[]): AnyMachineDefinition {
  const parsed = FlowSpecSchema.parse(spec);
  return defineMachine({
    id: parsed.id,
    spec: parsed,
    specHash: createHash('sha256').update(JSON.stringify(parsed)).digest('hex'),
    machine,
    tools: Object.fromEntries(tools.map((t) => [t.name, t])),
  });
}

/**
 * A tool that waits until `release()` (or its signal aborts), counting calls and remembering the last signal.
 * `release()` resolves once every call it released has returned its answer.
 */
export function gateTool(name = 'wait') {
  let releases: Array<() => void> = [];
  let returns: Array<Promise<void>> = [];
  const state = { calls: 0, signal: undefined as AbortSignal | undefined };
  const tool = defineTool({
    name,
    description: 'waits to be released',
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    timeoutMs: 60_000,
    async run(_input, { signal }) {
      state.calls++;
      state.signal = signal;
      let answered!: () => void;
      returns.push(new Promise<void>((resolve) => (answered = resolve)));
      await new Promise<void>((resolve) => releases.push(resolve));
      try {
        return { ok: true };
      } finally {
        answered();
      }
    },
  });
  return {
    tool,
    state,
    release(): Promise<void> {
      const [r, answered] = [releases, returns];
      releases = [];
      returns = [];
      r.forEach((f) => f());
      return Promise.all(answered).then(() => {});
    },
  };
}

/**
 * idle --GO{n}[n > 0]--> working (invokes `wait`) --done--> idle; idle --FINISH--> done (final). PING is declared
 * but handled nowhere while idle: the minimal machine behind every refusal code.
 */
export function refusalMachine(wait: AnyTool) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'refusals',
    context: { n: { type: 'number', default: 0 } },
    events: { GO: { n: { type: 'number' } }, PING: {}, FINISH: {} },
    initial: 'idle',
    states: {
      idle: { on: { GO: { guard: 'event.n > 0', target: 'working', assign: { n: 'event.n' } }, FINISH: 'done' } },
      working: { invoke: { tool: wait.name, onDone: 'idle', onError: 'idle' } },
      done: { type: 'final' },
    },
  };
  type Ev = { type: 'GO'; n: number } | { type: 'PING' } | { type: 'FINISH' };
  const machine = setup({
    types: {} as { context: { n: number }; events: Ev },
    actors: { [`tool.${wait.name}`]: fromTool(wait) },
  }).createMachine({
    id: 'refusals',
    context: { n: 0 },
    initial: 'idle',
    states: {
      idle: {
        on: {
          GO: { guard: ({ event }) => event.n > 0, target: '#refusals.working', actions: assign({ n: ({ event }) => event.n }) },
          FINISH: { target: '#refusals.done' },
        },
      },
      working: {
        invoke: {
          id: 'working',
          src: `tool.${wait.name}`,
          input: () => ({ args: {} }),
          onDone: { target: '#refusals.idle' },
          onError: { target: '#refusals.idle' },
        },
      },
      done: { type: 'final' },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, [wait]), machine });
}

/** idle --RUN{args}--> calling (invokes the tool with `args`) --> idle with `result` or `error` (the code). */
export function singleToolMachine(tool: AnyTool, options: { idempotencyKey?: string; retries?: number; timeoutMs?: number } = {}) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'single-tool',
    context: {
      args: { type: 'unknown', optional: true },
      result: { type: 'unknown', optional: true },
      error: { type: 'string', optional: true },
    },
    events: { RUN: { args: { type: 'unknown' } } },
    initial: 'idle',
    states: {
      idle: { on: { RUN: { target: 'calling', assign: { args: 'event.args' } } } },
      calling: {
        invoke: {
          tool: tool.name,
          ...(options.retries === undefined ? {} : { retries: options.retries }),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          onDone: { target: 'idle', assign: { result: 'output' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ctx = { args?: unknown; result?: unknown; error?: string };
  type Ev = { type: 'RUN'; args: unknown };
  const machine = setup({
    types: {} as { context: Ctx; events: Ev },
    actors: { [`tool.${tool.name}`]: fromTool(tool) },
  }).createMachine({
    id: 'single-tool',
    context: {},
    initial: 'idle',
    states: {
      idle: {
        on: {
          RUN: {
            target: '#single-tool.calling',
            actions: assign({ args: ({ event }) => event.args, result: undefined, error: undefined }),
          },
        },
      },
      calling: {
        invoke: {
          id: 'calling',
          src: `tool.${tool.name}`,
          input: ({ context }) => ({
            args: context.args,
            ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
          }),
          onDone: { target: '#single-tool.idle', actions: assign({ result: ({ event }) => event.output }) },
          onError: { target: '#single-tool.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, [tool]), machine });
}

/** idle --REQUEST{amount}--> await_approval --APPROVE--> paying (high-risk `pay`) --> idle; REJECT --> idle. */
export function approvalMachine(pay: AnyTool) {
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'approvals',
    context: {
      amount: { type: 'number', default: 0 },
      paid: { type: 'string', optional: true },
      error: { type: 'string', optional: true },
    },
    events: { REQUEST: { amount: { type: 'number' } }, APPROVE: {}, REJECT: { reason: { type: 'string', optional: true } } },
    initial: 'idle',
    states: {
      idle: { on: { REQUEST: { target: 'await_approval', assign: { amount: 'event.amount' } } } },
      await_approval: { on: { APPROVE: 'paying', REJECT: 'idle' } },
      paying: {
        invoke: {
          tool: pay.name,
          input: { amount: 'context.amount' },
          onDone: { target: 'idle', assign: { paid: 'output.receipt' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ev = { type: 'REQUEST'; amount: number } | { type: 'APPROVE' } | { type: 'REJECT'; reason?: string };
  const machine = setup({
    types: {} as { context: { amount: number; paid?: string; error?: string }; events: Ev },
    actors: { [`tool.${pay.name}`]: fromTool(pay) },
  }).createMachine({
    id: 'approvals',
    context: { amount: 0 },
    initial: 'idle',
    states: {
      idle: { on: { REQUEST: { target: '#approvals.await_approval', actions: assign({ amount: ({ event }) => event.amount }) } } },
      await_approval: { on: { APPROVE: { target: '#approvals.paying' }, REJECT: { target: '#approvals.idle' } } },
      paying: {
        invoke: {
          id: 'paying',
          src: `tool.${pay.name}`,
          input: ({ context }) => ({ args: { amount: context.amount } }),
          onDone: { target: '#approvals.idle', actions: assign({ paid: ({ event }) => (event.output as { receipt: string }).receipt }) },
          onError: { target: '#approvals.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, [pay]), machine });
}

/** Seqs of a log must be 1..n without gaps or duplicates. */
export function expectGapless(events: ReadonlyArray<{ seq: number }>): boolean {
  return events.every((e, i) => e.seq === i + 1);
}

/** idle --ASK{text}--> helping (an agent over `tools`, at most `maxIterations`) --> idle with `answer` or `error`. */
export function agentMachine(tools: AnyTool[], maxIterations = 3) {
  const names = tools.map((t) => t.name);
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'agent-test',
    context: {
      text: { type: 'string', optional: true },
      answer: { type: 'string', optional: true },
      error: { type: 'string', optional: true },
    },
    events: { ASK: { text: { type: 'string' } } },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: 'helping', assign: { text: 'event.text' } } } },
      helping: {
        invoke: {
          llm: 'agent',
          prompt: '{{ context.text }}',
          tools: names,
          maxIterations,
          onDone: { target: 'idle', assign: { answer: 'output.text' } },
          onError: { target: 'idle', assign: { error: 'error.code' } },
        },
      },
    },
  };
  type Ev = { type: 'ASK'; text: string };
  const machine = setup({
    types: {} as { context: { text?: string; answer?: string; error?: string }; events: Ev },
    actors: { 'llm.agent.helping': fromLlm('agent') },
  }).createMachine({
    id: 'agent-test',
    context: {},
    initial: 'idle',
    states: {
      idle: {
        on: {
          ASK: { target: '#agent-test.helping', actions: assign({ text: ({ event }) => event.text, answer: undefined, error: undefined }) },
        },
      },
      helping: {
        invoke: {
          id: 'helping',
          src: 'llm.agent.helping',
          input: ({ context }) => ({ kind: 'agent' as const, prompt: context.text ?? '', tools: names, maxIterations }),
          onDone: { target: '#agent-test.idle', actions: assign({ answer: ({ event }) => event.output.text }) },
          onError: { target: '#agent-test.idle', actions: assign({ error: ({ event }) => (event.error as FlowError).code }) },
        },
      },
    },
  });
  return defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, tools), machine });
}

/**
 * idle --RUN{n}--> counting, which calls `tick` and comes back to itself until `count` reaches `n`, then idle: one
 * event from outside makes about n + 2 steps. `limits` goes into the spec as it is.
 */
export function loopMachine(limits?: { stepsPerTurn?: number }) {
  const tick = defineTool({
    name: 'tick',
    description: 'answers at once',
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    idempotent: true,
    async run() {
      return { ok: true };
    },
  });
  const spec: FlowSpecInput = {
    specVersion: 1,
    id: 'loop',
    context: { n: { type: 'number', default: 0 }, count: { type: 'number', default: 0 } },
    events: { RUN: { n: { type: 'number' } } },
    initial: 'idle',
    ...(limits ? { limits } : {}),
    states: {
      idle: { on: { RUN: { target: 'counting', assign: { n: 'event.n', count: '0' } } } },
      counting: {
        invoke: {
          tool: 'tick',
          onDone: [{ guard: 'context.count < context.n', target: 'counting', assign: { count: 'context.count + 1' } }, { target: 'idle' }],
          onError: 'idle',
        },
      },
    },
  };
  type Ctx = { n: number; count: number };
  type Ev = { type: 'RUN'; n: number };
  const machine = setup({
    types: {} as { context: Ctx; events: Ev },
    actors: { 'tool.tick': fromTool(tick) },
  }).createMachine({
    id: 'loop',
    context: { n: 0, count: 0 },
    initial: 'idle',
    states: {
      idle: { on: { RUN: { target: '#loop.counting', actions: assign({ n: ({ event }) => event.n, count: 0 }) } } },
      counting: {
        invoke: {
          id: 'counting',
          src: 'tool.tick',
          input: () => ({ args: {} }),
          onDone: [
            {
              guard: ({ context }) => context.count < context.n,
              target: '#loop.counting',
              reenter: true,
              actions: assign({ count: ({ context }) => context.count + 1 }),
            },
            { target: '#loop.idle' },
          ],
          onError: { target: '#loop.idle' },
        },
      },
    },
  });
  return { definition: defineMachine<typeof machine, Ev>({ ...defineTestMachine(spec, machine, [tick]), machine }), tick };
}
