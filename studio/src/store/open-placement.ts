import type { FlowSpec, Position } from '@flowing/spec';
import { fillMissingLayout, LARGE_MACHINE_STATES, quickLayout, type LayoutGeometry } from '../graph/index.ts';
import { graphOf } from './graph-cache.ts';
import { layoutMachine } from './layout-service.ts';

/** How an opened machine is drawn first, and what elkjs brings later. */
export interface OpenPlacement {
  /** The spec to draw now: saved places, states without one placed next to their neighbours, or the quick placement. */
  spec: FlowSpec;
  /** Routes and label places to draw with it, when they were waited for (a small machine). */
  geometry: LayoutGeometry | undefined;
  /**
   * The quick placement (`spec.layout`) when the machine had no saved place and is large: `later` brings the elkjs
   * layout that replaces it, unless an edit moved, added or removed a state in between (the layout object changed).
   */
  quick: Record<string, Position> | undefined;
  /** elkjs on its way, in the worker: the layout replacing `quick`, else the routes for the saved places. */
  later: Promise<LayoutGeometry> | undefined;
  /** Why a layout the open waited for failed (the states are drawn at the quick placement or their saved places). */
  failure: Error | undefined;
}

/**
 * Places a machine for drawing as it opens, in the editor and the Inspect view alike. Saved places are kept; states
 * added since are placed next to their neighbours. A small machine waits for elkjs (a fraction of a second) and opens
 * with its routes. A large one is drawn at once: without saved places at the quick layered placement (milliseconds),
 * with elkjs following in the worker and never on the page (it would hold the page for seconds).
 * @example const placed = await placeForOpen(spec); draw(placed.spec); placed.later?.then(replaceOrRoute)
 */
export async function placeForOpen(spec: FlowSpec): Promise<OpenPlacement> {
  // A caller that no longer wants the result (another machine opened meanwhile) leaves `later` alone: its failure
  // must not surface as an unhandled rejection.
  const inWorker = (mark?: string) => {
    const later = layoutMachine(spec, { mark, onPage: false });
    later.catch(() => undefined);
    return later;
  };
  const nodes = graphOf(spec).nodes;
  const missing = nodes.filter((n) => !n.data.layout).length;
  const unplaced = missing > 0 && missing === nodes.length;
  if (nodes.length > LARGE_MACHINE_STATES) {
    if (unplaced) {
      const start = performance.now();
      const layout = quickLayout(spec, graphOf(spec));
      performance.measure('flowing:quick-layout', { start, detail: { machine: spec.id } });
      return {
        spec: { ...spec, layout },
        geometry: undefined,
        quick: layout,
        later: inWorker(),
        failure: undefined,
      };
    }
    return {
      spec: missing > 0 ? fillMissingLayout(spec) : spec,
      geometry: undefined,
      quick: undefined,
      later: inWorker('flowing:routes'),
      failure: undefined,
    };
  }
  let geometry: LayoutGeometry | undefined;
  let failure: Error | undefined;
  try {
    geometry = await layoutMachine(spec);
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  let drawn = spec;
  if (unplaced) drawn = { ...spec, layout: geometry ? geometry.layout : quickLayout(spec, graphOf(spec)) };
  else if (missing > 0) drawn = fillMissingLayout(spec);
  return { spec: drawn, geometry, quick: undefined, later: undefined, failure };
}

/**
 * A spec with the elkjs layout in place of the quick placement, or undefined when the quick placement is no longer
 * what the spec shows (an edit moved, added or removed a state: what the user sees is kept).
 */
export function replaceQuick(spec: FlowSpec, quick: Record<string, Position>, layout: Record<string, Position>): FlowSpec | undefined {
  return spec.layout === quick ? { ...spec, layout } : undefined;
}
