import { graphOf } from '../store/graph-cache.ts';
import { useReactFlow } from '@xyflow/react';
import { useCallback } from 'react';
import { fitViewport, graphBounds } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';

/**
 * Fit-view that keeps text legible: it zooms to show the whole machine, but never below `FIT_ZOOM_FLOOR` (labels stay
 * at least 10 px on screen). A machine too large for that starts at its top (the initial state) and scrolls.
 */
export function useFitView(): () => void {
  const flow = useReactFlow();
  return useCallback(() => {
    const { spec, geometry } = useEditor.getState();
    const found = spec && graphBounds(graphOf(spec).nodes, geometry);
    const pane = document.querySelector('.canvas .react-flow');
    if (!found || !pane) return;
    void flow.setViewport(fitViewport(found, pane.getBoundingClientRect()));
  }, [flow]);
}
