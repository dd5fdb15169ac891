import { readFileSync } from 'node:fs';
import ElkModule from 'elkjs/lib/elk.bundled.js';
import { describe, expect, it } from 'vitest';
import type { FlowSpec } from '../../spec/index.ts';
import { computeLayout, specToGraph, type ElkLayouter } from '../../studio/src/graph/index.ts';

const ELK = ElkModule as unknown as new () => ElkLayouter;
const example = (id: string) => JSON.parse(readFileSync(new URL(`../../machines/${id}/${id}.flow.json`, import.meta.url), 'utf8')) as FlowSpec;

interface Rect { id: string; x: number; y: number; width: number; height: number; parentId: string | undefined }

/** Absolute rectangles of every node after the layout is applied. */
function rects(spec: FlowSpec): Rect[] {
  const graph = specToGraph(spec);
  const out = new Map<string, Rect>();
  for (const node of graph.nodes) {
    const parent = node.parentId ? out.get(node.parentId) : undefined;
    out.set(node.id, { id: node.id, x: (parent?.x ?? 0) + node.position.x, y: (parent?.y ?? 0) + node.position.y, width: node.width, height: node.height, parentId: node.parentId });
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

  it('lays out left to right: the initial state is left of the states it leads to', async () => {
    const spec = example('incident-triage');
    const layout = await computeLayout(spec, new ELK());
    expect(layout.waiting!.x).toBeLessThan(layout.gathering!.x);
    expect(layout.gathering!.x).toBeLessThan(layout.summarize!.x);
    expect(layout.gathering!.width).toBeGreaterThan(0);
  });
});
