import ElkModule from 'elkjs/lib/elk.bundled.js';
import type { FlowSpec } from '@flowing/spec';
import { computeGeometry, estimateLabel, type ElkLayouter } from '../graph/index.ts';

/** A layout request: the spec and the measured size of every label text (the worker has no page fonts to measure). */
export interface LayoutRequest {
  id: number;
  spec: FlowSpec;
  sizes: Record<string, { width: number; height: number }>;
}

const Elk = ElkModule as unknown as new () => ElkLayouter;
const elk = new Elk();

// Runs elkjs off the page's main thread: a 300-state machine takes seconds to lay out, and the page stays responsive.
self.onmessage = async (message: MessageEvent<LayoutRequest>) => {
  const { id, spec, sizes } = message.data;
  try {
    const geometry = await computeGeometry(spec, elk, (lines) => sizes[lines.join('\n')] ?? estimateLabel(lines));
    self.postMessage({ id, result: geometry });
  } catch (error) {
    self.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
