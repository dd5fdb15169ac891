import { readFileSync } from 'node:fs';
import ElkModule from 'elkjs/lib/elk.bundled.js';
import { describe, expect, it } from 'vitest';
import { formatSpec, type FlowSpec } from '../../spec/index.ts';
import { generatedMachine } from '../e2e/graph-machines.ts';
import {
  absoluteBoxes,
  computeGeometry,
  computeLayout,
  specToGraph,
  toElkGraph,
  type Box,
  type ElkGraphNode,
  type ElkLayouter,
} from '../../studio/src/graph/index.ts';

const ELK = ElkModule as unknown as new () => ElkLayouter;
const example = (id: string) =>
  JSON.parse(readFileSync(new URL(`../../machines/${id}/${id}.flow.json`, import.meta.url), 'utf8')) as FlowSpec;

interface Rect {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  parentId: string | undefined;
}

/** Absolute rectangles of every node after the layout is applied. */
function rects(spec: FlowSpec): Rect[] {
  const graph = specToGraph(spec);
  const out = new Map<string, Rect>();
  for (const node of graph.nodes) {
    const parent = node.parentId ? out.get(node.parentId) : undefined;
    out.set(node.id, {
      id: node.id,
      x: (parent?.x ?? 0) + node.position.x,
      y: (parent?.y ?? 0) + node.position.y,
      width: node.width,
      height: node.height,
      parentId: node.parentId,
    });
  }
  return [...out.values()];
}

const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe('auto-layout with elkjs', () => {
  for (const id of ['order-support', 'incident-triage']) {
    it(`places every state of ${id} without overlaps, children inside their parent`, async () => {
      const spec = example(id);
      const layout = await computeLayout(spec, new ELK());
      const laidOut = { ...spec, layout };
      const all = rects(laidOut);
      expect(Object.keys(layout).length).toBe(all.length);
      for (const a of all) {
        for (const b of all) {
          if (a.id >= b.id || a.parentId !== b.parentId) continue;
          expect(overlaps(a, b), `${a.id} overlaps ${b.id}`).toBe(false);
        }
        const parent = all.find((p) => p.id === a.parentId);
        if (parent) {
          expect(a.x).toBeGreaterThanOrEqual(parent.x);
          expect(a.y).toBeGreaterThan(parent.y);
          expect(a.x + a.width).toBeLessThanOrEqual(parent.x + parent.width);
          expect(a.y + a.height).toBeLessThanOrEqual(parent.y + parent.height);
        }
      }
    });
  }

  it('lays out top to bottom: the initial state is above the states it leads to, parallel regions side by side', async () => {
    const spec = example('incident-triage');
    const layout = await computeLayout(spec, new ELK());
    expect(layout.waiting!.y).toBeLessThan(layout.gathering!.y);
    expect(layout.gathering!.y).toBeLessThan(layout.summarize!.y);
    expect(layout.gathering!.width).toBeGreaterThan(0);
    expect(layout['gathering.logs']!.y).toBe(layout['gathering.metrics']!.y);
    expect(layout['gathering.logs']!.x + layout['gathering.logs']!.width!).toBeLessThan(layout['gathering.metrics']!.x);
  });
});

describe('routes and label boxes from elkjs', () => {
  const inside = (p: { x: number; y: number }, b: Box) =>
    p.x > b.x + 0.5 && p.x < b.x + b.width - 0.5 && p.y > b.y + 0.5 && p.y < b.y + b.height - 0.5;
  const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

  for (const id of ['order-support', 'incident-triage', 'generated-60']) {
    it(`${id}: every transition has an orthogonal route and a label box, no label box on a leaf state or on another label`, async () => {
      const spec = id === 'generated-60' ? generatedMachine() : example(id);
      const geometry = await computeGeometry(spec, new ELK());
      const graph = specToGraph({ ...spec, layout: geometry.layout });
      const boxes = absoluteBoxes(graph.nodes);
      const leaves = graph.nodes.filter((n) => !graph.nodes.some((c) => c.parentId === n.id));
      const labels = graph.edges.map((e) => geometry.edges[e.id]?.label);
      expect(labels.every((l) => l !== undefined)).toBe(true);
      for (const [i, label] of labels.entries()) {
        for (const leaf of leaves) expect(overlap(label!, boxes.get(leaf.id)!), `${graph.edges[i]!.id} on ${leaf.id}`).toBe(false);
        for (const other of labels.slice(i + 1)) expect(overlap(label!, other!)).toBe(false);
      }
      // Routes go around states: no segment of a route crosses a leaf state other than its own two ends.
      for (const edge of graph.edges) {
        const points = geometry.edges[edge.id]!.points;
        for (let i = 1; i < points.length; i++) {
          const straight = Math.abs(points[i]!.x - points[i - 1]!.x) < 0.5 || Math.abs(points[i]!.y - points[i - 1]!.y) < 0.5;
          expect(straight, `${edge.id} has a diagonal step`).toBe(true);
        }
        for (const point of points.slice(1, -1)) {
          for (const leaf of leaves) expect(inside(point, boxes.get(leaf.id)!), `${edge.id} bends inside ${leaf.id}`).toBe(false);
        }
        for (let i = 1; i < points.length; i++) {
          const [a, b] = [points[i - 1]!, points[i]!];
          const segment = { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.abs(a.x - b.x), height: Math.abs(a.y - b.y) };
          for (const leaf of leaves) {
            if (leaf.id === edge.source || leaf.id === edge.target) continue;
            const box = boxes.get(leaf.id)!;
            const crosses =
              segment.x < box.x + box.width - 1 &&
              box.x + 1 < segment.x + segment.width + 0.01 &&
              segment.y < box.y + box.height - 1 &&
              box.y + 1 < segment.y + segment.height + 0.01;
            expect(crosses, `${edge.id} runs through ${leaf.id}`).toBe(false);
          }
        }
      }
      // The stored node boxes are the ones the spec's new layout gives: the routes stay current until a state moves.
      for (const [nodeId, box] of boxes) expect(geometry.nodes[nodeId]).toEqual(box);
    });
  }

  it('puts each label of a row of invoke branches, error and timeout on its own route (the route runs through it)', async () => {
    const spec = {
      specVersion: 1,
      id: 'label-rows',
      events: { GO: {} },
      initial: 'idle',
      states: {
        idle: { on: { GO: 'lookup' } },
        lookup: {
          invoke: {
            tool: 'query_order',
            onDone: [{ guard: "output.status == 'shipped'", target: 'shipped' }, { target: 'fallback' }],
            onError: 'failed',
          },
          after: { '30000': 'timed_out' },
        },
        shipped: { type: 'final' },
        fallback: { type: 'final' },
        failed: { type: 'final' },
        timed_out: { type: 'final' },
      },
    } as unknown as FlowSpec;
    const geometry = await computeGeometry(spec, new ELK());
    for (const [id, edge] of Object.entries(geometry.edges)) {
      const label = edge.label!;
      const through = edge.points.slice(1).some((b, i) => {
        const a = edge.points[i]!;
        return (
          a.x === b.x &&
          a.x > label.x + 1 &&
          a.x < label.x + label.width - 1 &&
          Math.min(a.y, b.y) <= label.y &&
          Math.max(a.y, b.y) >= label.y + label.height
        );
      });
      expect(through, `${id}: its label ${JSON.stringify(label)} is beside its route, not on it`).toBe(true);
    }
  });

  it('lets the branches of an invoke leave from its done and error ports, each transition from its own port otherwise', async () => {
    const spec = example('order-support');
    const { root } = toElkGraph(spec);
    const all: ElkGraphNode[] = [];
    const walk = (n: ElkGraphNode) => {
      all.push(n);
      n.children?.forEach(walk);
    };
    walk(root);
    const fetchOrder = all.find((n) => n.id === '/states/active/states/fetch_order')!;
    const edges = root.edges!.filter((e) => e.id.startsWith('/states/active/states/fetch_order/invoke/'));
    expect(edges.filter((e) => e.sources[0] === '/states/active/states/fetch_order#done')).toHaveLength(3);
    expect(edges.filter((e) => e.sources[0] === '/states/active/states/fetch_order#error')).toHaveLength(2);
    expect(fetchOrder.ports!.map((p) => p.id)).toEqual(
      expect.arrayContaining(['/states/active/states/fetch_order#done', '/states/active/states/fetch_order#error']),
    );
    const idleIn = all
      .find((n) => n.id === '/states/active/states/idle')!
      .ports!.filter((p) => p.layoutOptions?.['elk.port.side'] === 'NORTH');
    expect(idleIn.length).toBeGreaterThan(3);
    const geometry = await computeGeometry(spec, new ELK());
    const ports = geometry.ports['/states/active/states/fetch_order']!;
    expect(ports.done!.x).not.toBe(ports.error!.x);
  });

  it('lays a machine out the same before and after a Save puts its keys in order (so the routes of a saved layout fit it)', async () => {
    // generatedMachine writes a compound state's `onDone` before its `on`; a Save puts `on` first.
    const spec = generatedMachine();
    const saved = JSON.parse(formatSpec(spec)) as FlowSpec;
    expect(JSON.stringify(saved)).not.toBe(JSON.stringify(spec));
    const before = await computeGeometry(spec, new ELK());
    const after = await computeGeometry({ ...saved, layout: before.layout }, new ELK());
    expect(after.layout).toEqual(before.layout);
    expect(after.edges).toEqual(before.edges);
  });
});
