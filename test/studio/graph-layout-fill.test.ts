import { describe, expect, it } from 'vitest';
import type { FlowSpec } from '../../spec/index.ts';
import { absoluteBoxes, fillMissingLayout, specToGraph, statesWithoutLayout, type Box } from '../../studio/src/graph/index.ts';
import { countStates, generatedMachine } from '../e2e/graph-machines.ts';

const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** A laid-out machine whose saved layout lacks the given keys (as after a hand edit that added those states). */
function without(spec: FlowSpec, keys: string[]): FlowSpec {
  const layout = { ...spec.layout };
  for (const key of keys) delete layout[key];
  return { ...spec, layout };
}

/** The generated 60-state machine with every state placed on a grid per level (a stand-in for a saved layout). */
function placedMachine(): FlowSpec {
  const spec = generatedMachine();
  const graph = specToGraph(spec);
  const layout: NonNullable<FlowSpec['layout']> = {};
  const count = new Map<string | undefined, number>();
  for (const node of graph.nodes) {
    const i = count.get(node.parentId) ?? 0;
    count.set(node.parentId, i + 1);
    layout[node.data.layoutKey] = { x: 24 + (i % 4) * 300, y: 64 + Math.floor(i / 4) * 200 };
  }
  // Compound states with a saved size, as the studio saves them after a layout.
  for (const node of graph.nodes.filter((n) => graph.nodes.some((c) => c.parentId === n.id))) {
    const placed = specToGraph({ ...spec, layout });
    const box = placed.nodes.find((n) => n.id === node.id)!;
    layout[node.data.layoutKey] = { ...layout[node.data.layoutKey]!, width: box.width, height: box.height };
  }
  return { ...spec, layout };
}

describe('placing states without a saved position (the layout after an edit)', () => {
  it('keeps every placed state exactly where it is', () => {
    const spec = placedMachine();
    const missing = ['monitor', 'review.step_7', 'checks.logs.logs_check'];
    const filled = fillMissingLayout(without(spec, missing));
    expect(statesWithoutLayout(filled)).toEqual([]);
    for (const [key, position] of Object.entries(spec.layout!)) {
      if (missing.includes(key)) continue;
      expect({ x: filled.layout![key]!.x, y: filled.layout![key]!.y }, key).toEqual({ x: position.x, y: position.y });
    }
  });

  it('puts a new state below the state that leads into it, on no sibling', () => {
    const spec = placedMachine();
    const filled = fillMissingLayout(without(spec, ['review.step_7']));
    const graph = specToGraph(filled);
    const boxes = absoluteBoxes(graph.nodes);
    const placed = graph.nodes.find((n) => n.data.layoutKey === 'review.step_7')!;
    const from = graph.nodes.find((n) => n.data.layoutKey === 'review.step_6')!;
    expect(boxes.get(placed.id)!.y).toBeGreaterThan(boxes.get(from.id)!.y + from.height);
    for (const sibling of graph.nodes.filter((n) => n.parentId === placed.parentId && n.id !== placed.id))
      expect(overlap(boxes.get(placed.id)!, boxes.get(sibling.id)!), `on ${sibling.id}`).toBe(false);
  });

  it('grows a parent with a saved size to hold a child placed in it', () => {
    const spec = placedMachine();
    const filled = fillMissingLayout(without(spec, ['review.step_9']));
    const graph = specToGraph(filled);
    const parent = graph.nodes.find((n) => n.data.layoutKey === 'review')!;
    const child = graph.nodes.find((n) => n.data.layoutKey === 'review.step_9')!;
    expect(child.position.x + child.width).toBeLessThanOrEqual(parent.width);
    expect(child.position.y + child.height).toBeLessThanOrEqual(parent.height);
  });

  it('places a new compound state around its new children', () => {
    const spec = placedMachine();
    const missing = Object.keys(spec.layout!).filter((k) => k === 'checks' || k.startsWith('checks.'));
    const filled = fillMissingLayout(without(spec, missing));
    const graph = specToGraph(filled);
    const boxes = absoluteBoxes(graph.nodes);
    const checks = graph.nodes.find((n) => n.data.layoutKey === 'checks')!;
    for (const child of graph.nodes.filter((n) => n.parentId === checks.id)) {
      const box = boxes.get(child.id)!;
      expect(box.x + box.width, child.id).toBeLessThanOrEqual(boxes.get(checks.id)!.x + checks.width);
      expect(box.y + box.height, child.id).toBeLessThanOrEqual(boxes.get(checks.id)!.y + checks.height);
    }
    for (const sibling of graph.nodes.filter((n) => n.parentId === undefined && n.id !== checks.id))
      expect(overlap(boxes.get(checks.id)!, boxes.get(sibling.id)!), `on ${sibling.id}`).toBe(false);
  });

  it('places 30 new states of a 300-state machine in a fraction of a second (no elkjs run)', () => {
    const spec = generatedMachine('generated-300', 300);
    expect(countStates(spec.states)).toBe(300);
    const graph = specToGraph(spec);
    const layout: NonNullable<FlowSpec['layout']> = {};
    graph.nodes.forEach((node, i) => {
      layout[node.data.layoutKey] = { x: (i % 12) * 300, y: Math.floor(i / 12) * 200 };
    });
    const keys = graph.nodes.filter((_n, i) => i % 10 === 5).map((n) => n.data.layoutKey);
    const partial = without({ ...spec, layout }, keys);
    fillMissingLayout(partial);
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      const started = performance.now();
      fillMissingLayout(partial);
      times.push(performance.now() - started);
    }
    const median = times.sort((a, b) => a - b)[2]!;
    console.log(`placing 30 of 300 states: median ${median.toFixed(1)} ms of ${times.length}`);
    // Milliseconds on an idle machine; the bound leaves room for a shared, loaded one (a full elkjs layout takes seconds).
    expect(median).toBeLessThan(400);
  });
});
