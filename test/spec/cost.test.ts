import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { computeCost, MAX_LLM_REPAIRS, validateSpec, type Cost, type FlowSpec, type MachineCost, type ToolInfo } from '../../spec/index.ts';
import { generatedMachine } from '../e2e/graph-machines.ts';
import { REPO_DIR } from '../helpers/project.ts';

/** The example tools as the tool catalog describes them: idempotent ones retry twice (the default), the others never. */
const exampleTools: Record<string, ToolInfo> = Object.fromEntries(
  [
    ['resolve_user', true],
    ['query_order', true],
    ['trace_shipment', true],
    ['issue_refund', false],
    ['fetch_logs', true],
    ['fetch_metrics', true],
    ['page_oncall', false],
    ['faq_lookup', true],
  ].map(([name, idempotent]) => [name, { name, idempotent, risk: 'low', retries: 2 } as ToolInfo]),
);

function example(id: string): FlowSpec {
  const result = validateSpec(JSON.parse(readFileSync(`${REPO_DIR}machines/${id}/${id}.flow.json`, 'utf8')));
  expect(result.ok).toBe(true);
  return result.spec!;
}

/** A spec object as the cost bound reads it (no schema defaults needed beyond these). */
function spec(id: string, states: Record<string, unknown>, extra: Record<string, unknown> = {}): FlowSpec {
  return { specVersion: 1, id, context: {}, events: {}, initial: Object.keys(states)[0], states, ...extra } as FlowSpec;
}

function calls(model: number, tool: number, tokens = model === 0 ? 0 : Infinity): Cost {
  return { modelCalls: model, toolCalls: tool, tokens };
}

function turn(cost: MachineCost, from: string, event: string | undefined, to: string) {
  const row = cost.turns.find((r) => r.from === from && r.event === event && r.to === to);
  expect(row, `turn ${from} ${event} -> ${to}`).toBeDefined();
  return row!;
}

describe('cost bound of the examples (hand-computed)', () => {
  it('order-support: 7 model and 9 tool calls per turn at most, 13 and 15 on a path counting each turn once', () => {
    const cost = computeCost(example('order-support'), { tools: exampleTools });
    expect(cost.perTurn).toBe(true);
    // classify and extract: 1 + 2 repairs each; compose_reply: 1. resolve_user, query_order (retries: 2) and
    // trace_shipment: 3 attempts each.
    expect(MAX_LLM_REPAIRS).toBe(2);
    expect(turn(cost, 'idle', 'USER_MESSAGE', 'idle').cost).toEqual(calls(3 + 3 + 1, 3 + 3 + 3));
    expect(turn(cost, 'idle', 'USER_MESSAGE', 'idle').states).toEqual([
      'classify',
      'extract_order_id',
      'resolve_user',
      'fetch_order',
      'trace_shipment',
      'compose_reply',
      'idle',
    ]);
    expect(turn(cost, 'idle', 'USER_MESSAGE', 'ask_order_id').cost).toEqual(calls(6, 0));
    expect(turn(cost, 'ask_order_id', 'USER_MESSAGE', 'idle').cost).toEqual(calls(3 + 1, 9));
    // issue_refund is not idempotent: one attempt.
    expect(turn(cost, 'await_approval', 'APPROVE', 'idle').cost).toEqual(calls(0, 1));
    expect(turn(cost, 'active', 'CANCEL', 'cancelled').cost).toEqual(calls(0, 0));
    expect(turn(cost, '(start)', undefined, 'idle').cost).toEqual(calls(0, 0));
    expect(cost.maximum.turn).toEqual(calls(7, 9));
    // Each turn once: idle -> ask_order_id (6 model), ask_order_id -> order_not_found (3), order_not_found -> idle (4),
    // then CANCEL: 13 model calls (idle -> idle, 7, would use idle's USER_MESSAGE turn a second time). Tool calls:
    // idle -> order_not_found (6), order_not_found -> ask_order_id (0), ask_order_id -> idle (9): 15.
    expect(cost.maximum.session.modelCalls).toBe(13);
    expect(cost.maximum.session.toolCalls).toBe(15);
    expect(cost.paths.map((p) => p.to).sort()).toEqual(['cancelled', 'failed']);
    expect(cost.problems).toEqual([]);
    expect(cost.calls.classify!.cost).toEqual(calls(3, 0));
    expect(cost.calls.fetch_order!.cost).toEqual(calls(0, 3));
    expect(cost.calls.refund!.cost).toEqual(calls(0, 1));
  });

  it('incident-triage: the parallel gathering adds both regions; 1 model and 7 tool calls per alert', () => {
    const cost = computeCost(example('incident-triage'), { tools: exampleTools });
    // fetch_logs and fetch_metrics: 3 attempts each (regions run together: both count), summarize: 1 model call,
    // page_oncall: not idempotent, 1.
    expect(turn(cost, 'waiting', 'ALERT', 'monitoring').cost).toEqual(calls(1, 3 + 3 + 1));
    expect(turn(cost, 'monitoring', 'RESOLVE', 'resolved').cost).toEqual(calls(0, 0));
    expect(cost.maximum.turn).toEqual(calls(1, 7));
    // waiting -ALERT-> monitoring -ALERT-> monitoring -RESOLVE-> resolved: each turn once.
    expect(cost.maximum.session).toEqual(calls(2, 14));
    expect(cost.paths).toHaveLength(1);
    expect(cost.paths[0]!.to).toBe('resolved');
  });

  it('support-desk: a hop adds the costliest path of the child machine to the triage agent; 6 model calls a turn, within its budget', () => {
    const children = new Map(['support-orders', 'support-billing'].map((id) => [id, example(id)]));
    const resolveMachine = (id: string) => children.get(id);
    // Its budget counts its children: it validates only with them.
    const validated = validateSpec(JSON.parse(readFileSync(`${REPO_DIR}machines/support-desk/support-desk.flow.json`, 'utf8')), {
      resolveMachine,
    });
    expect(validated.problems).toEqual([]);
    const desk = validated.spec!;
    const cost = computeCost(desk, { tools: exampleTools, resolveMachine });
    // triage: 2 iterations (300 tokens each), each with up to 4 faq_lookup calls of 3 attempts.
    const triage = { modelCalls: 2, toolCalls: 2 * 4 * 3, tokens: 600 };
    // support-orders: extract (1 + 2 repairs, 50 tokens each), resolve_user, query_order, trace_shipment (3 attempts
    // each), generate (300 tokens).
    const orders = { modelCalls: 3 + 1, toolCalls: 3 + 3 + 3, tokens: 150 + 300 };
    // support-billing, its whole path (the approval is the child's turn): extract, resolve_user, query_order, generate
    // (200 tokens), issue_refund once (not idempotent).
    const billing = { modelCalls: 3 + 1, toolCalls: 3 + 3 + 1, tokens: 150 + 200 };
    const sum = (a: Cost, b: Cost) => ({
      modelCalls: a.modelCalls! + b.modelCalls!,
      toolCalls: a.toolCalls! + b.toolCalls!,
      tokens: a.tokens! + b.tokens!,
    });
    expect(turn(cost, 'idle', 'USER_MESSAGE', 'idle').cost).toEqual(sum(triage, orders));
    expect(cost.calls.billing!.cost).toEqual(billing);
    expect(cost.maximum.turn).toEqual(sum(triage, orders));
    expect(cost.maximum.turn.modelCalls).toBeLessThanOrEqual(desk.budget!.modelCalls!);
    expect(cost.problems).toEqual([]);
  });
});

describe('calls', () => {
  it('counts retries, agent iterations and maxTokens', () => {
    const tools: Record<string, ToolInfo> = {
      flaky: { name: 'flaky', idempotent: true, risk: 'low', retries: 1 },
      pay: { name: 'pay', idempotent: false, risk: 'low' },
      search: { name: 'search', idempotent: true, risk: 'low', retries: 0 },
    };
    const cost = computeCost(
      spec('calls', {
        a: { invoke: { tool: 'flaky', retries: 3, onDone: 'b', onError: 'b' } },
        b: { invoke: { tool: 'flaky', onDone: 'c', onError: 'c' } },
        c: { invoke: { tool: 'pay', idempotencyKey: 'context.id', retries: 2, onDone: 'd', onError: 'd' } },
        d: {
          invoke: { llm: 'agent', prompt: 'go', tools: ['search', 'flaky'], maxIterations: 3, maxTokens: 50, onDone: 'e', onError: 'e' },
        },
        e: { invoke: { llm: 'classify', input: 'context.x', labels: ['x', 'y'], maxTokens: 20, onDone: 'f', onError: 'f' } },
        f: { type: 'final' },
      }),
      { tools },
    );
    expect(cost.calls.a!.cost).toEqual(calls(0, 4)); // the invoke's retries win
    expect(cost.calls.b!.cost).toEqual(calls(0, 2)); // the definition's
    expect(cost.calls.c!.cost).toEqual(calls(0, 3)); // not idempotent, but with an idempotency key
    // 3 iterations; at most 4 tool calls per iteration (the runtime's cap), each up to 2 attempts (flaky).
    expect(cost.calls.d!.cost).toEqual({ modelCalls: 3, toolCalls: 3 * 4 * 2, tokens: 150 });
    expect(cost.calls.e!.cost).toEqual({ modelCalls: 3, toolCalls: 0, tokens: 60 });
    expect(cost.perTurn).toBe(false);
    expect(cost.maximum.session).toEqual({ modelCalls: 6, toolCalls: 4 + 2 + 3 + 24, tokens: 210 });
    expect(cost.maximum.turn).toEqual(cost.maximum.session);
  });
});

describe('agent calls', () => {
  it('a structured answer may be asked for again without using up an iteration; bound tools count by name', () => {
    const cost = computeCost(
      spec('agent', {
        work: {
          invoke: {
            llm: 'agent',
            prompt: 'go',
            tools: [{ tool: 'search', bind: { q: 'context.q' } }],
            maxIterations: 2,
            output: { answer: { type: 'string' } },
            onDone: 'end',
            onError: 'end',
          },
        },
        end: { type: 'final' },
      }),
      { tools: { search: { name: 'search', idempotent: false, risk: 'low' } } },
    );
    expect(cost.calls.work!.cost).toEqual({ modelCalls: 2 + MAX_LLM_REPAIRS, toolCalls: 2 * 4, tokens: Infinity });
  });
});

describe('agent handoffs', () => {
  it('a handoff ends the agent call: each handoff edge costs the agent iterations once, with no tool calls', () => {
    const cost = computeCost(
      spec('triage', {
        triage: {
          invoke: {
            llm: 'agent',
            prompt: 'go',
            handoffs: ['billing', 'refunds'],
            maxIterations: 2,
            maxTokens: 100,
            onDone: [
              { guard: "output.handoff.to == 'billing'", target: 'billing' },
              { guard: "output.handoff.to == 'refunds'", target: 'refunds' },
              { target: 'answered' },
            ],
            onError: 'answered',
          },
        },
        billing: { type: 'final' },
        refunds: { type: 'final' },
        answered: { type: 'final' },
      }),
      { tools: {} },
    );
    expect(cost.calls.triage!.cost).toEqual({ modelCalls: 2, toolCalls: 0, tokens: 200 });
    expect(cost.paths.map((p) => [p.to, p.cost.modelCalls]).sort()).toEqual([
      ['answered', 2],
      ['billing', 2],
      ['refunds', 2],
    ]);
  });
});

describe('loops', () => {
  const retry = (guard: string, increment = 'context.attempts + 1', extra: Record<string, unknown> = {}) =>
    spec(
      'retry',
      {
        call: {
          invoke: { tool: 'once', onDone: 'done', onError: { target: 'wait', assign: { attempts: increment } } },
        },
        wait: { after: { '1000': [{ guard, target: 'call' }, { target: 'failed' }] } },
        done: { type: 'final' },
        failed: { type: 'final' },
      },
      { context: { attempts: { type: 'number', default: 0 } }, ...extra },
    );
  const once: Record<string, ToolInfo> = { once: { name: 'once', idempotent: false, risk: 'low' } };

  it('an after-driven retry capped by a counter guard is bounded', () => {
    const cost = computeCost(retry('context.attempts < 3'), { tools: once });
    // The guarded edge passes at most ceil((3 - 0) / 1) = 3 times: the loop goes round at most 3 + 1 times.
    expect(cost.loops).toHaveLength(1);
    expect(cost.loops[0]).toMatchObject({ passes: 3, counter: 'attempts' });
    expect(cost.maximum.session.toolCalls).toBe(1 + 4);
    expect(cost.problems).toEqual([]);
  });

  it('an always loop whose guard also counts is bounded; `<=` and a larger step change the count', () => {
    const loop = (guard: string, step: string) =>
      spec(
        'poll',
        {
          ask: { invoke: { llm: 'generate', prompt: 'again?', onDone: 'check', onError: 'gave_up' } },
          check: { always: [{ guard, target: 'ask', assign: { n: step } }, { target: 'gave_up' }] },
          gave_up: { type: 'final' },
        },
        { context: { n: { type: 'number', default: 0 } } },
      );
    // ask, then at most 5 passes back to ask: 6 requests.
    expect(computeCost(loop('context.n < 5', 'context.n + 1')).maximum.session.modelCalls).toBe(1 + 5 + 1);
    expect(computeCost(loop('context.n <= 5', 'context.n + 1')).maximum.session.modelCalls).toBe(1 + 6 + 1);
    expect(computeCost(loop('5 > context.n && context.n >= 0', '2 + context.n')).maximum.session.modelCalls).toBe(1 + 3 + 1);
  });

  it('a loop nothing bounds is COST_UNBOUNDED, naming the cycle', () => {
    const cost = computeCost(retry("context.mode == 'again'"), { tools: once });
    expect(cost.maximum.session.toolCalls).toBe(Infinity);
    expect(cost.problems).toEqual([
      expect.objectContaining({ code: 'COST_UNBOUNDED', path: '/states/call', message: expect.stringContaining('call → wait → call') }),
    ]);
  });

  it('a counter the loop resets, a named action in the loop or an unknown start value bound nothing', () => {
    const reset = computeCost(retry('context.attempts < 3', '0'), { tools: once });
    expect(reset.problems[0]?.message).toContain('sets context.attempts to something other than');
    const withAction = retry('context.attempts < 3');
    (withAction.states.wait as any).after['1000'][0].actions = ['log'];
    expect(computeCost(withAction, { tools: once }).problems[0]?.message).toContain('named action');
    const noDefault = retry('context.attempts < 3', 'context.attempts + 1', { context: { attempts: { type: 'number', optional: true } } });
    expect(computeCost(noDefault, { tools: once }).problems[0]?.message).toContain('is not known');
    // Set on the way in, the start is known even without a default.
    const setOnEntry = spec(
      'entry',
      {
        start: { always: { target: 'call', assign: { attempts: '1' } } },
        ...(noDefault.states as Record<string, unknown>),
      },
      { context: { attempts: { type: 'number', optional: true } } },
    );
    const bounded = computeCost(setOnEntry, { tools: once });
    expect(bounded.problems).toEqual([]);
    expect(bounded.loops[0]?.passes).toBe(2);
  });

  it('a chat loop through a waiting state is per turn, not unbounded', () => {
    const cost = computeCost(
      spec(
        'chat',
        {
          idle: { on: { MESSAGE: 'reply', BYE: 'done' } },
          reply: { invoke: { llm: 'generate', prompt: 'hi', onDone: 'idle', onError: 'idle' } },
          done: { type: 'final' },
        },
        { events: { MESSAGE: {}, BYE: {} } },
      ),
    );
    expect(cost.problems).toEqual([]);
    expect(cost.perTurn).toBe(true);
    expect(turn(cost, 'idle', 'MESSAGE', 'idle').cost.modelCalls).toBe(1);
    expect(cost.maximum.session.modelCalls).toBe(1);
  });
});

describe('machine invocations', () => {
  const child = spec('billing', {
    decide: { invoke: { llm: 'classify', input: 'context.x', labels: ['a', 'b'], onDone: 'charge', onError: 'failed' } },
    charge: { invoke: { tool: 'charge', onDone: 'paid', onError: 'failed' } },
    paid: { type: 'final' },
    failed: { type: 'final' },
  });
  const parent = (machine: string) =>
    spec('desk', {
      triage: { invoke: { llm: 'generate', prompt: 'hello', onDone: 'bill', onError: 'done' } },
      bill: { invoke: { machine, input: {}, onDone: 'done', onError: 'done' } },
      done: { type: 'final' },
    });
  const tools: Record<string, ToolInfo> = { charge: { name: 'charge', idempotent: false, risk: 'low' } };

  it("adds the child's most costly path to the parent's", () => {
    const specs = new Map([['billing', child]]);
    const cost = computeCost(parent('billing'), { tools, resolveMachine: (id) => specs.get(id) });
    expect(cost.calls.bill).toMatchObject({ machine: 'billing', cost: calls(3, 1) });
    expect(cost.maximum.session).toEqual(calls(1 + 3, 1));
  });

  it('nests: a machine that invokes a machine', () => {
    const middle = parent('billing');
    const top = spec('top', {
      go: { invoke: { machine: 'desk', onDone: 'end', onError: 'end' } },
      end: { type: 'final' },
    });
    const specs = new Map<string, FlowSpec>([
      ['billing', child],
      ['desk', middle],
    ]);
    expect(computeCost(top, { tools, resolveMachine: (id) => specs.get(id) }).maximum.session).toEqual(calls(4, 1));
  });

  it('a cycle of machine invocations is COST_UNBOUNDED naming it; an unknown machine is COST_UNKNOWN_MACHINE', () => {
    const a = spec('a', { go: { invoke: { machine: 'b', onDone: 'end', onError: 'end' } }, end: { type: 'final' } });
    const b = spec('b', { go: { invoke: { machine: 'a', onDone: 'end', onError: 'end' } }, end: { type: 'final' } });
    const specs = new Map([
      ['a', a],
      ['b', b],
    ]);
    const cost = computeCost(a, { resolveMachine: (id) => specs.get(id) });
    expect(cost.maximum.session.modelCalls).toBe(Infinity);
    expect(cost.problems.map((p) => p.message).join('\n')).toContain('a → b → a');
    const unknown = computeCost(parent('nowhere'));
    expect(unknown.problems).toEqual([expect.objectContaining({ code: 'COST_UNKNOWN_MACHINE', path: '/states/bill/invoke/machine' })]);
  });
});

describe('budget', () => {
  function budgeted(budget: Record<string, unknown>) {
    const text = readFileSync(`${REPO_DIR}machines/order-support/order-support.flow.json`, 'utf8');
    return { ...JSON.parse(text), budget };
  }

  it('a turn over the budget is an error at the call that crosses it, naming the path', () => {
    const result = validateSpec(budgeted({ modelCalls: 6 }), { tools: exampleTools });
    expect(result.ok).toBe(false);
    const over = result.problems.filter((p) => p.code === 'SPEC_BUDGET_EXCEEDED');
    // classify (3) + extract (3) = 6 is within; compose_reply's request is the 7th.
    expect(over).toEqual([
      {
        code: 'SPEC_BUDGET_EXCEEDED',
        severity: 'error',
        path: '/states/active/states/compose_reply/invoke',
        message:
          "the turn on USER_MESSAGE from 'idle' (to 'idle') (classify → extract_order_id → resolve_user → fetch_order → trace_shipment → compose_reply → idle) makes up to 7 model calls; the budget allows 6 per turn",
      },
    ]);
    expect(validateSpec(budgeted({ modelCalls: 7, toolCalls: 9 }), { tools: exampleTools }).ok).toBe(true);
  });

  it('per session, tool calls, and tokens no call declares', () => {
    const session = validateSpec(budgeted({ modelCalls: 12, per: 'session' }), { tools: exampleTools });
    expect(session.problems.filter((p) => p.code === 'SPEC_BUDGET_EXCEEDED').map((p) => p.message)[0]).toMatch(
      /^the path to '(cancelled|failed)' \(.*\) makes up to 13 model calls; the budget allows 12 per session$/,
    );
    const tools = validateSpec(budgeted({ toolCalls: 5 }), { tools: exampleTools });
    expect(tools.problems.find((p) => p.code === 'SPEC_BUDGET_EXCEEDED')?.path).toBe('/states/active/states/fetch_order/invoke');
    const tokens = validateSpec(budgeted({ tokens: 1000 }), { tools: exampleTools });
    expect(tokens.problems.find((p) => p.code === 'SPEC_BUDGET_EXCEEDED')?.message).toContain('declares no maxTokens');
  });

  it('an unbounded loop is over any budget', () => {
    const loop = {
      specVersion: 1,
      id: 'loop',
      budget: { modelCalls: 100 },
      initial: 'ask',
      states: {
        ask: { invoke: { llm: 'generate', prompt: 'again?', onDone: 'ask', onError: 'end' } },
        end: { type: 'final' },
      },
    };
    const result = validateSpec(loop);
    expect(result.problems.map((p) => p.code).sort()).toEqual(['COST_UNBOUNDED', 'SPEC_BUDGET_EXCEEDED']);
    expect(result.problems.find((p) => p.code === 'SPEC_BUDGET_EXCEEDED')?.message).toContain('the loop ask has no bound');
  });
});

describe('a 300-state machine', () => {
  it('is bounded in well under a second, naming the loops nothing bounds', () => {
    const large = generatedMachine('generated-300', 300);
    const order = example('order-support');
    const median = (run: () => void) => {
      const times: number[] = [];
      for (let i = 0; i < 9; i++) {
        const start = performance.now();
        run();
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b)[4]!;
    };
    const largeMs = median(() => computeCost(large));
    const orderMs = median(() => computeCost(order));
    // The figure the README quotes: `npx vitest run test/spec/cost.test.ts -t '300-state'`.
    console.log(`computeCost median of 9: order-support ${orderMs.toFixed(1)} ms, generated-300 ${largeMs.toFixed(1)} ms`);
    expect(largeMs).toBeLessThan(2_000);
    const cost = computeCost(large);
    // Each region's fetch -> check -> fetch loop has a guard on context.n but nothing adds to it.
    expect(cost.problems.map((p) => p.path)).toEqual([
      '/states/checks/states/logs/states/logs_fetch',
      '/states/checks/states/metrics/states/metrics_fetch',
      '/states/checks/states/traces/states/traces_fetch',
    ]);
    expect(cost.maximum.turn.toolCalls).toBe(Infinity);
  });
});
