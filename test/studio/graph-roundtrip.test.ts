import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSpec, type FlowSpec, type StateSpec, type TransitionObject, type TransitionSpec } from '../../spec/index.ts';
import { graphToSpec, specToGraph } from '../../studio/src/graph/index.ts';

const example = (id: string) =>
  JSON.parse(readFileSync(new URL(`../../machines/${id}/${id}.flow.json`, import.meta.url), 'utf8')) as FlowSpec;

const transitionArb: fc.Arbitrary<TransitionObject> = fc.record(
  {
    target: fc.constantFrom('s0', 's1', 's2', 's3', 'missing'),
    guard: fc.oneof(fc.constantFrom('context.x > 1', "output.label == 'a'"), fc.record({ ref: fc.constantFrom('isOk') })),
    assign: fc.dictionary(fc.constantFrom('x', 'y'), fc.constantFrom('event.x', '1')),
    actions: fc.array(fc.constantFrom('log', 'notify'), { maxLength: 2 }),
    description: fc.string({ maxLength: 8 }),
  },
  { requiredKeys: [] },
);
const transitionSpecArb: fc.Arbitrary<TransitionSpec> = fc.oneof(
  fc.constantFrom('s0', 's1', 's2', 'missing'),
  transitionArb,
  fc.array(transitionArb, { maxLength: 3 }),
);

interface Plan {
  parent: number;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | undefined;
  state: StateSpec;
  layout: boolean;
}

const planArb: fc.Arbitrary<Plan> = fc.record({
  parent: fc.nat({ max: 20 }),
  type: fc.constantFrom(undefined, 'atomic', 'compound', 'parallel', 'final'),
  layout: fc.boolean(),
  state: fc.record(
    {
      description: fc.string({ maxLength: 10 }),
      tags: fc.array(fc.constantFrom('waiting', 'human'), { maxLength: 2 }),
      on: fc.dictionary(fc.constantFrom('GO', 'STOP', 'USER_MESSAGE', 'a/b~c'), transitionSpecArb, { maxKeys: 3 }),
      after: fc.dictionary(fc.constantFrom('1000', '5000'), transitionSpecArb, { maxKeys: 2 }),
      always: transitionSpecArb,
      onDone: transitionSpecArb,
      entry: fc.record({ assign: fc.dictionary(fc.constantFrom('x'), fc.constantFrom('1')) }, { requiredKeys: [] }),
      invoke: fc.oneof(
        fc.record(
          {
            tool: fc.constantFrom('query_order'),
            input: fc.dictionary(fc.constantFrom('order_id'), fc.constantFrom('context.x')),
            onDone: transitionSpecArb,
            onError: transitionSpecArb,
          },
          { requiredKeys: ['tool'] },
        ),
        fc.record(
          { llm: fc.constantFrom('classify' as const), labels: fc.constant(['a', 'b']), onDone: transitionSpecArb },
          { requiredKeys: ['llm'] },
        ),
      ),
    },
    { requiredKeys: [] },
  ) as fc.Arbitrary<StateSpec>,
});

/** Builds a spec from a flat plan: state i hangs under an earlier state (or the root), names s0, s1, ... */
function buildSpec(plans: Plan[], orphanLayout: boolean): FlowSpec {
  const states: Record<string, StateSpec> = {};
  const built: Array<{ state: StateSpec; path: string[] }> = [];
  const layout: Record<string, { x: number; y: number; width?: number }> = {};
  plans.forEach((plan, i) => {
    const state: StateSpec = { ...plan.state };
    if (plan.type) state.type = plan.type;
    const parentIndex = i === 0 ? -1 : (plan.parent % (i + 1)) - 1;
    const parent = parentIndex >= 0 ? built[parentIndex] : undefined;
    const name = `s${i}`;
    const path = parent ? [...parent.path, name] : [name];
    if (parent) (parent.state.states ??= {})[name] = state;
    else states[name] = state;
    built.push({ state, path });
    if (plan.layout) layout[path.join('.')] = { x: i * 10, y: i * 3, ...(i % 3 === 0 ? { width: 300 } : {}) };
  });
  if (orphanLayout) layout['gone.away'] = { x: 1, y: 2 };
  const spec: FlowSpec = { specVersion: 1, id: 'random', context: { x: { type: 'number' } }, events: { GO: {} }, initial: 's0', states };
  if (Object.keys(layout).length > 0) spec.layout = layout;
  return spec;
}

describe('spec <-> graph conversion', () => {
  for (const id of ['order-support', 'incident-triage']) {
    it(`rebuilds the ${id} example exactly from its nodes and edges`, () => {
      const spec = example(id);
      const graph = specToGraph(spec);
      expect(graph.nodes.length).toBeGreaterThan(5);
      expect(graph.edges.length).toBeGreaterThan(5);
      const back = graphToSpec(graph);
      expect(back).toEqual(spec);
      expect(formatSpec(back)).toBe(formatSpec(spec));
    });
  }

  it('draws one node per state (compound children point at their parent) and one edge per transition', () => {
    const graph = specToGraph(example('order-support'));
    const idle = graph.nodes.find((n) => n.data.name === 'idle')!;
    expect(idle.parentId).toBe('/states/active');
    expect(idle.data.isInitial).toBe(true);
    const fetchEdges = graph.edges.filter((e) => e.data.sourceName === 'fetch_order');
    expect(fetchEdges.map((e) => e.data.label)).toEqual([
      "done [context.intent == 'refund']",
      "done [output.status == 'shipped']",
      'done',
      "error [error.code == 'ORDER_NOT_FOUND']",
      'error',
    ]);
    expect(fetchEdges[0]!.id).toBe('/states/active/states/fetch_order/invoke/onDone/0');
    const triage = specToGraph(example('incident-triage'));
    const logs = triage.nodes.find((n) => n.data.name === 'logs')!;
    expect(logs.data.isRegion).toBe(true);
    expect(triage.edges.find((e) => e.data.kind === 'after')!.data.label).toBe('after 8000ms');
  });

  it('round-trips random specs (nesting, every transition form, layout, dangling targets) without loss', () => {
    fc.assert(
      fc.property(fc.array(planArb, { minLength: 1, maxLength: 14 }), fc.boolean(), (plans, orphan) => {
        const spec = buildSpec(plans, orphan);
        const back = graphToSpec(specToGraph(spec));
        expect(back).toEqual(spec);
        expect(formatSpec(back)).toBe(formatSpec(spec));
      }),
      { numRuns: 300 },
    );
  });
});
