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
import { createWorkerClient } from './worker-client.ts';

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

const LAYOUT_TIMEOUT_MS = 60_000;

const inWorker = createWorkerClient<Omit<LayoutRequest, 'id'>, LayoutGeometry>({
  start: () => new LayoutWorker(),
  code: 'STUDIO_LAYOUT_FAILED',
  what: 'the layout',
  timeoutMs: LAYOUT_TIMEOUT_MS,
});

/**
 * Lays a machine out in a web worker (elkjs), labels measured here in the page's font. Rejects with a
 * `STUDIO_LAYOUT_FAILED` error when the worker fails or takes longer than a minute.
 */
export function layoutInWorker(spec: FlowSpec): Promise<LayoutGeometry> {
  const sizes: Record<string, { width: number; height: number }> = {};
  for (const edge of specToGraph(spec).edges) sizes[edge.data.lines.join('\n')] ??= measureLabel(edge.data.lines);
  return inWorker({ spec, sizes });
}

/** Lays a machine out on the page's own thread (used when no worker can start). */
export async function layoutHere(spec: FlowSpec): Promise<LayoutGeometry> {
  const m = await import('elkjs/lib/elk.bundled.js');
  const Elk = (m.default ?? m) as unknown as new () => ElkLayouter;
  return computeGeometry(spec, new Elk(), measureLabel);
}

export interface LayoutOptions {
  /** The Performance API measure taken, with the machine's id as its detail (`flowing:layout` unless given). */
  mark?: string;
  /**
   * Lay the machine out on the page when no worker can start (default true). Not for a large machine: elkjs would
   * hold the page for seconds.
   */
  onPage?: boolean;
}

/**
 * Lays a machine out, in the worker when it can start, else (unless `onPage` is false) on the page; measures the
 * time for the figures. Rejects with a `STUDIO_LAYOUT_FAILED` error when no layout could be made.
 */
export async function layoutMachine(spec: FlowSpec, options: LayoutOptions = {}): Promise<LayoutGeometry> {
  const { mark = 'flowing:layout', onPage = true } = options;
  const start = performance.now();
  let geometry: LayoutGeometry;
  try {
    geometry = await layoutInWorker(spec);
  } catch (error) {
    if (!onPage) throw error;
    console.warn(`${(error as Error).message}; laying out on the page instead`);
    geometry = await layoutHere(spec);
  }
  performance.measure(mark, { start, detail: { machine: spec.id } });
  return geometry;
}
