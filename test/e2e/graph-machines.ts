import type { FlowSpec, StateSpec } from '../../spec/index.ts';

/**
 * A generated machine of `size` states (60 by default) with the shapes a real one has: a compound state with a chain
 * of guarded steps, a parallel state whose regions are compound, tool calls with guarded onDone/onError branches,
 * `after` timeouts, `always` transitions, back edges and self-transitions. No layout: the studio lays it out.
 */
export function generatedMachine(id = 'generated-60', size = 60): FlowSpec {
  const states: Record<string, StateSpec> = {};
  let count = 0;
  const take = (n = 1) => {
    count += n;
    return count <= size;
  };
  take();
  states.intake = { tags: ['waiting'], on: { START: { target: 'review', guard: 'context.n >= 0' }, PING: { guard: 'context.n > 100' } } };
  const chain: Record<string, StateSpec> = {};
  const chainLength = Math.max(4, Math.floor((size - 24) / 2));
  for (let i = 0; i < chainLength && take(); i++) {
    const next = i + 1 < chainLength ? `step_${i + 1}` : 'step_done';
    const state: StateSpec =
      i % 4 === 1
        ? {
            invoke: {
              tool: 'query_order',
              input: { order_id: "context.orderId ?? ''", customer_id: "'c-100'" },
              onDone: [
                { guard: 'output.total <= 100', target: next },
                { guard: "output.status == 'shipped'", target: `step_${Math.max(0, i - 1)}` },
                { target: 'step_done' },
              ],
              onError: [{ guard: "error.code == 'ORDER_NOT_FOUND'", target: 'failed' }, { target: next }],
            },
          }
        : {
            on: {
              NEXT: { target: next, assign: { n: 'context.n + 1' } },
              ...(i > 0 ? { BACK: { target: `step_${i - 1}`, guard: 'context.n > 0 && context.orderId != undefined' } } : {}),
            },
            ...(i % 3 === 0 ? { after: { '30000': 'step_done' } } : {}),
          };
    chain[`step_${i}`] = state;
  }
  take();
  chain.step_done = { type: 'final' };
  take();
  states.review = { initial: 'step_0', states: chain, onDone: 'checks', on: { CANCEL: 'cancelled' } };
  const regions: Record<string, StateSpec> = {};
  for (const region of ['logs', 'metrics', 'traces']) {
    if (!take()) break;
    const children: Record<string, StateSpec> = {};
    take(4);
    children[`${region}_fetch`] = {
      invoke: { tool: 'fetch_logs', input: { service: "'api'", minutes: '15' }, onDone: `${region}_check`, onError: `${region}_failed` },
    };
    children[`${region}_check`] = { always: [{ guard: 'context.n > 3', target: `${region}_ready` }, { target: `${region}_fetch` }] };
    children[`${region}_failed`] = { on: { RETRY: `${region}_fetch` }, after: { '5000': `${region}_ready` } };
    children[`${region}_ready`] = { type: 'final' };
    regions[region] = { initial: `${region}_fetch`, states: children };
  }
  take();
  states.checks = { type: 'parallel', states: regions, onDone: 'decide', after: { '60000': 'failed' } };
  take();
  states.decide = {
    always: [
      { guard: "context.orderId == 'A1001'", target: 'approve' },
      { guard: 'context.n > 10', target: 'monitor' },
      { target: 'failed' },
    ],
  };
  take();
  states.approve = { tags: ['approval'], on: { APPROVE: 'refund', REJECT: { target: 'intake', assign: { n: '0' } } } };
  take();
  states.refund = {
    invoke: { tool: 'issue_refund', input: { order_id: "context.orderId ?? ''", amount: '10' }, onDone: 'monitor', onError: 'failed' },
  };
  let i = 0;
  while (count + 6 <= size && take()) {
    states[`extra_${i}`] = {
      on: { NEXT: i % 2 === 0 ? `extra_${i + 1}` : 'monitor', TICK: { guard: 'context.n < 5', assign: { n: 'context.n + 1' } } },
    };
    i++;
  }
  if (i > 0) states[`extra_${i}`] = { on: { NEXT: 'monitor' } };
  states.monitor = {
    tags: ['waiting'],
    on: { RESOLVE: 'resolved', REOPEN: { target: 'intake', guard: 'context.n < 3' }, ...(i > 0 ? { MORE: 'extra_0' } : {}) },
  };
  states.resolved = { type: 'final' };
  states.failed = { type: 'final', description: 'Something went wrong.' };
  states.cancelled = { type: 'final' };
  return {
    specVersion: 1,
    id,
    description: 'A generated machine for the geometry and performance checks.',
    context: { n: { type: 'number', default: 0 }, orderId: { type: 'string', optional: true } },
    events: {
      START: {},
      PING: {},
      NEXT: {},
      BACK: {},
      CANCEL: {},
      RETRY: {},
      APPROVE: {},
      REJECT: {},
      TICK: {},
      RESOLVE: {},
      REOPEN: {},
      MORE: {},
    },
    initial: 'intake',
    states,
  } as FlowSpec;
}

/** Counts the states of a spec (all levels). */
export function countStates(states: Record<string, StateSpec>): number {
  return Object.values(states).reduce((n, s) => n + 1 + countStates(s.states ?? {}), 0);
}
