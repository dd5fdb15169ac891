import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FlowSpec } from '../../spec/index.ts';
import { absoluteBoxes, quickLayout, specToGraph, statesWithoutLayout, type Box } from '../../studio/src/graph/index.ts';
import { countStates, generatedMachine } from '../e2e/graph-machines.ts';

const example = (id: string) =>
  JSON.parse(readFileSync(new URL(`../../machines/${id}/${id}.flow.json`, import.meta.url), 'utf8')) as FlowSpec;
const withoutLayout = (spec: FlowSpec): FlowSpec => {
  const { layout: _layout, ...rest } = spec;
  return rest as FlowSpec;
};
const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** The states of a spec drawn at the quick placement: absolute boxes, and who holds whom. */
function placed(spec: FlowSpec) {
  const laid = { ...spec, layout: quickLayout(spec) };
  const graph = specToGraph(laid);
  return { laid, graph, boxes: absoluteBoxes(graph.nodes) };
}

const MACHINES: Array<[string, () => FlowSpec]> = [
  ['the generated 300-state machine', () => generatedMachine('generated-300', 300)],
  ['the generated 60-state machine', () => generatedMachine()],
  ...['order-support', 'incident-triage', 'support-desk', 'support-billing', 'support-orders'].map(
    (id) => [id, () => withoutLayout(example(id))] as [string, () => FlowSpec],
  ),
];

describe('the quick placement of a machine without saved places', () => {
  for (const [name, make] of MACHINES) {
    it(`places every state of ${name}, no state on another, children inside their parent`, () => {
      const spec = make();
      const { laid, graph, boxes } = placed(spec);
      expect(statesWithoutLayout(laid)).toEqual([]);
      expect(Object.keys(laid.layout).length).toBe(countStates(spec.states));
      const ancestors = (id: string) => {
        const out = new Set<string>();
        for (let n = graph.nodes.find((x) => x.id === id); n?.parentId; n = graph.nodes.find((x) => x.id === n!.parentId))
          out.add(n.parentId);
        return out;
      };
      for (const a of graph.nodes) {
        const above = ancestors(a.id);
        for (const b of graph.nodes) {
          // Two states overlap unless one holds the other; a state inside its parent is what nesting draws.
          if (a.id >= b.id || above.has(b.id) || ancestors(b.id).has(a.id)) continue;
          expect(overlap(boxes.get(a.id)!, boxes.get(b.id)!), `${a.id} lies on ${b.id}`).toBe(false);
        }
        if (a.parentId) {
          const box = boxes.get(a.id)!;
          const parent = boxes.get(a.parentId)!;
          expect(box.x, `${a.id} left of its parent`).toBeGreaterThanOrEqual(parent.x);
          expect(box.y, `${a.id} above its parent's header`).toBeGreaterThan(parent.y);
          expect(box.x + box.width, `${a.id} right of its parent`).toBeLessThanOrEqual(parent.x + parent.width);
          expect(box.y + box.height, `${a.id} below its parent`).toBeLessThanOrEqual(parent.y + parent.height);
        }
      }
    });
  }

  it('reads top to bottom from the initial state; parallel regions side by side', () => {
    const layout = quickLayout(withoutLayout(example('incident-triage')));
    expect(layout.waiting!.y).toBeLessThan(layout.gathering!.y);
    expect(layout.gathering!.y).toBeLessThan(layout.summarize!.y);
    expect(layout['gathering.logs']!.y).toBe(layout['gathering.metrics']!.y);
    expect(layout['gathering.logs']!.x + layout['gathering.logs']!.width!).toBeLessThan(layout['gathering.metrics']!.x);
    const spec = generatedMachine('generated-300', 300);
    const big = quickLayout(spec);
    expect(big.intake!.y).toBeLessThan(big.review!.y);
    expect(big['review.step_0']!.y).toBeLessThan(big['review.step_1']!.y);
  });

  it('gives compound states the size that holds their children, as a saved layout does', () => {
    const layout = quickLayout(generatedMachine('generated-300', 300));
    for (const key of ['review', 'checks', 'checks.logs']) {
      expect(layout[key]!.width, key).toBeGreaterThan(0);
      expect(layout[key]!.height, key).toBeGreaterThan(0);
    }
    expect(layout['review.step_0']!.width).toBeUndefined();
  });

  it('is deterministic: the same spec gives the same placement', () => {
    const spec = generatedMachine('generated-300', 300);
    expect(JSON.stringify(quickLayout(spec))).toBe(JSON.stringify(quickLayout(structuredClone(spec))));
  });

  it('places 300 states in well under 100 ms', () => {
    const spec = generatedMachine('generated-300', 300);
    quickLayout(spec);
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      quickLayout(spec);
      runs.push(performance.now() - start);
    }
    runs.sort((a, b) => a - b);
    console.log(`quick placement of 300 states: median ${runs[2]!.toFixed(1)} ms`);
    // The target is well under 100 ms; a loose bound for a shared, loaded machine.
    expect(runs[2]).toBeLessThan(100);
  });
});
