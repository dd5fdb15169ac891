import { describe, expect, it } from 'vitest';
import type { FlowSpec } from '../../spec/index.ts';
import { addTransition, labelLines, markFallback, moveBranch, specToGraph } from '../../studio/src/graph/index.ts';

const base: FlowSpec = {
  specVersion: 1,
  id: 'branches',
  context: {},
  events: { GO: {} },
  initial: 'lookup',
  states: {
    lookup: {
      invoke: { tool: 'query_order', input: {}, onDone: [{ guard: 'output.total <= 100', target: 'approved' }, { target: 'denied' }] },
    },
    approved: { type: 'final' },
    denied: { type: 'final' },
  },
} as FlowSpec;

describe('branch lists (first match wins)', () => {
  it('labels each branch with its order and marks the last unguarded one as the fallback', () => {
    const edges = specToGraph(base).edges;
    expect(edges.map((e) => e.data.lines)).toEqual([['done #1', '[output.total <= 100]'], ['done #2 · fallback']]);
    expect(edges.map((e) => e.sourceHandle)).toEqual(['done', 'done']);
  });

  it('moves a branch earlier and returns its new pointer', () => {
    const result = moveBranch(base, '/states/lookup/invoke/onDone/1', 0);
    expect(result.ok && result.pointer).toBe('/states/lookup/invoke/onDone/0');
    expect(result.ok && result.spec.states.lookup!.invoke!.onDone).toEqual([
      { target: 'denied' },
      { guard: 'output.total <= 100', target: 'approved' },
    ]);
  });

  it('makes a branch the fallback: its guard goes and it moves to the end', () => {
    const spec = addTransition(base, '/states/lookup', { kind: 'onDone' }, { target: 'approved', guard: 'output.total > 5000' });
    if (!spec.ok) throw new Error(spec.message);
    const result = markFallback(spec.spec, '/states/lookup/invoke/onDone/0');
    expect(result.ok && result.spec.states.lookup!.invoke!.onDone).toEqual([
      { target: 'denied' },
      { target: 'approved', guard: 'output.total > 5000' },
      { target: 'approved' },
    ]);
    expect(result.ok && result.pointer).toBe('/states/lookup/invoke/onDone/2');
  });

  it('refuses a delay that is not a whole number of milliseconds with GRAPH_INVALID_DELAY', () => {
    const result = addTransition(base, '/states/lookup', { kind: 'after', delay: '5s' }, { target: 'denied' });
    expect(result.ok ? 'ok' : result.code).toBe('GRAPH_INVALID_DELAY');
  });

  it('adds always, after and self-transitions', () => {
    let spec = base;
    for (const [place, transition] of [
      [{ kind: 'always' }, { target: 'approved', guard: 'context.x > 1' }],
      [{ kind: 'after', delay: '5000' }, { target: 'denied' }],
      [{ kind: 'on', event: 'GO' }, { target: 'lookup' }],
    ] as const) {
      const r = addTransition(spec, '/states/lookup', place, transition);
      if (!r.ok) throw new Error(r.message);
      spec = r.spec;
    }
    expect(spec.states.lookup).toMatchObject({
      always: { target: 'approved', guard: 'context.x > 1' },
      after: { '5000': 'denied' },
      on: { GO: 'lookup' },
    });
    const self = specToGraph(spec).edges.find((e) => e.data.kind === 'on')!;
    expect(self.source).toBe(self.target);
  });

  it('elides a long guard on the canvas and keeps it whole for the tooltip', () => {
    const guard = "context.order.status == 'shipped' && context.order.total > 100";
    const { lines, full } = labelLines('on', 'CHECK', { guard, target: 'x' });
    expect(lines[1]!.length).toBeLessThanOrEqual(34);
    expect(lines[1]).toMatch(/…\]$/);
    expect(full).toBe(`CHECK [${guard}]`);
  });
});
