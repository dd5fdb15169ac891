import { describe, expect, it } from 'vitest';
import type { FlowSpec } from '../../spec/index.ts';
import { channelNames, emitsByState, handoffOfBranch, handoffTargets } from '../../studio/src/graph/index.ts';

const spec = {
  specVersion: 1,
  id: 'desk',
  context: { orderId: { type: 'string', default: '' } },
  events: { ASK: {} },
  initial: 'idle',
  states: {
    idle: {
      entry: { emit: [{ channel: 'audit.opened', key: 'context.orderId' }] },
      on: {
        ASK: [
          { guard: "context.orderId == ''", target: 'idle' },
          { target: 'work', emit: [{ channel: 'billing.need_order', key: 'context.orderId' }] },
        ],
      },
    },
    work: {
      initial: 'inner',
      states: { inner: { exit: { emit: [{ channel: 'billing.need_order', key: 'context.orderId' }] } } },
    },
  },
} as unknown as FlowSpec;

describe('channel badges (which states emit on which channels)', () => {
  it('finds the emits of entry, exit and guarded transitions, by state path, and names each place', () => {
    const byState = emitsByState(spec);
    expect(byState.get('idle')).toEqual([
      { channel: 'audit.opened', where: 'entry' },
      { channel: 'billing.need_order', where: 'on ASK' },
    ]);
    expect(byState.get('work.inner')).toEqual([{ channel: 'billing.need_order', where: 'exit' }]);
    expect(byState.has('work')).toBe(false);
  });

  it('answers the same arrays for the same spec object (a node re-renders only when its spec changes)', () => {
    expect(emitsByState(spec).get('idle')).toBe(emitsByState(spec).get('idle'));
    expect(channelNames([...emitsByState(spec).get('idle')!, { channel: 'audit.opened', where: 'exit' }])).toEqual([
      'audit.opened',
      'billing.need_order',
    ]);
  });
});

describe('hand-offs on the graph', () => {
  it("reads an agent call's hand-off targets, and nothing from a call without them or with a malformed list", () => {
    expect(handoffTargets({ llm: 'agent', handoffs: ['billing', 'refunds'] })).toEqual(['billing', 'refunds']);
    expect(handoffTargets({ llm: 'agent' })).toBeUndefined();
    expect(handoffTargets({ llm: 'agent', handoffs: [] })).toBeUndefined();
    expect(handoffTargets({ llm: 'agent', handoffs: [1] })).toBeUndefined();
    expect(handoffTargets({ llm: 'classify', handoffs: ['billing'] })).toBeUndefined();
    expect(handoffTargets({ tool: 'x' })).toBeUndefined();
  });

  it('names the hand-off an onDone branch routes from its guard on output.handoff, either way round', () => {
    expect(handoffOfBranch({ guard: "output.handoff.to == 'billing'", target: 'billing' })).toBe('billing');
    expect(handoffOfBranch({ guard: "output.handoff == 'billing'", target: 'billing' })).toBe('billing');
    expect(handoffOfBranch({ guard: "output.handoff.reason == 'late'", target: 'r' })).toBe('');
    // As support-desk writes it: the null check first, the target after.
    expect(handoffOfBranch({ guard: "output.handoff != undefined && output.handoff.to == 'orders'", target: 'o' })).toBe('orders');
    expect(handoffOfBranch({ guard: "'refunds' === output.handoff.to && context.ok", target: 'r' })).toBe('refunds');
    expect(handoffOfBranch({ guard: 'output.handoff != null', target: 'r' })).toBe('');
    expect(handoffOfBranch({ guard: "output.label == 'handoff'", target: 'r' })).toBeUndefined();
    expect(handoffOfBranch({ guard: { ref: 'isHandoff' }, target: 'r' })).toBeUndefined();
    expect(handoffOfBranch({ target: 'r' })).toBeUndefined();
  });
});
