import type { FlowSpec } from '@flowing/spec';
import {
  computeGeometry,
  estimateLabel,
  LABEL_FONT_PX,
  LABEL_LINE_PX,
  LABEL_PAD_X,
  LABEL_PAD_Y,
  specToGraph,
  type ElkLayouter,
  type LabelMeasure,
  type LayoutGeometry,
} from '../graph/index.ts';
import type { LayoutRequest } from './layout.worker.ts';
import LayoutWorker from './layout.worker.ts?worker';

let context: CanvasRenderingContext2D | null | undefined;

/** Measures label lines in the font the canvas draws them with (the `--mono` family of styles.css). */
export const measureLabel: LabelMeasure = (lines) => {
  if (context === undefined) {
    context = document.createElement('canvas').getContext('2d');
    const family = getComputedStyle(document.documentElement).getPropertyValue('--mono').trim() || 'monospace';
    if (context) context.font = `${LABEL_FONT_PX}px ${family}`;
  }
  if (!context) return estimateLabel(lines);
  const width = Math.max(...lines.map((line) => context!.measureText(line).width));
  // +2 for the border, +2 so that rounding in the page never wraps or clips the text.
  return { width: Math.ceil(width + 2 * LABEL_PAD_X + 4), height: lines.length * LABEL_LINE_PX + 2 * LABEL_PAD_Y + 2 };
};

let worker: Worker | undefined;
let nextId = 1;
const waiting = new Map<number, { resolve: (g: LayoutGeometry) => void; reject: (e: Error) => void }>();

function layoutWorker(): Worker {
  if (worker) return worker;
  worker = new LayoutWorker();
  worker.onmessage = (message: MessageEvent<{ id: number; geometry?: LayoutGeometry; error?: string }>) => {
    const pending = waiting.get(message.data.id);
    waiting.delete(message.data.id);
    if (!pending) return;
    if (message.data.geometry) pending.resolve(message.data.geometry);
    else pending.reject(new Error(`STUDIO_LAYOUT_FAILED: ${message.data.error ?? 'the layout worker gave no result'}`));
  };
  worker.onerror = (event) => {
    // A worker that cannot start (or crashed) fails every waiting layout with a coded error instead of hanging.
    const error = new Error(`STUDIO_LAYOUT_FAILED: the layout worker stopped (${event.message || 'no reason given'})`);
    for (const pending of waiting.values()) pending.reject(error);
    waiting.clear();
    worker?.terminate();
    worker = undefined;
  };
  return worker;
}

const LAYOUT_TIMEOUT_MS = 60_000;

/**
 * Lays a machine out in a web worker (elkjs), labels measured here in the page's font. Rejects with a
 * `STUDIO_LAYOUT_FAILED` error when the worker fails or takes longer than a minute.
 */
export function layoutInWorker(spec: FlowSpec): Promise<LayoutGeometry> {
  const sizes: Record<string, { width: number; height: number }> = {};
  for (const edge of specToGraph(spec).edges) sizes[edge.data.lines.join('\n')] ??= measureLabel(edge.data.lines);
  const id = nextId++;
  return new Promise<LayoutGeometry>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error(`STUDIO_LAYOUT_FAILED: the layout took longer than ${LAYOUT_TIMEOUT_MS / 1000} s`));
    }, LAYOUT_TIMEOUT_MS);
    waiting.set(id, {
      resolve: (g) => {
        clearTimeout(timer);
        resolve(g);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
    try {
      const request: LayoutRequest = { id, spec, sizes };
      layoutWorker().postMessage(request);
    } catch (error) {
      waiting.delete(id);
      clearTimeout(timer);
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/** Lays a machine out on the page's own thread (used when no worker can start). */
export async function layoutHere(spec: FlowSpec): Promise<LayoutGeometry> {
  const m = await import('elkjs/lib/elk.bundled.js');
  const Elk = (m.default ?? m) as unknown as new () => ElkLayouter;
  return computeGeometry(spec, new Elk(), measureLabel);
}

/**
 * Lays a machine out, in the worker when it can start, else on the page; measures `mark` (`flowing:layout` unless
 * given, with the machine's id as its detail) for the figures.
 */
export async function layoutMachine(spec: FlowSpec, mark = 'flowing:layout'): Promise<LayoutGeometry> {
  const start = performance.now();
  let geometry: LayoutGeometry;
  try {
    geometry = await layoutInWorker(spec);
  } catch (error) {
    console.warn(`${(error as Error).message}; laying out on the page instead`);
    geometry = await layoutHere(spec);
  }
  performance.measure(mark, { start, detail: { machine: spec.id } });
  return geometry;
}
