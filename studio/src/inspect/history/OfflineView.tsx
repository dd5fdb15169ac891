import { useMemo } from 'react';
import { graphOf } from '../../store/graph-cache.ts';
import { ContextPanel } from '../ContextPanel.tsx';
import { EventList } from '../EventList.tsx';
import { graphMarks } from '../graph-marks.ts';
import { InspectGraph } from '../InspectGraph.tsx';
import { useInspect, viewedIndex } from '../inspect-store.ts';
import { useSessionAt } from '../useSessionAt.ts';
import type { GraphSpec } from './graph-spec.ts';

/**
 * A session opened from a file, offline: the graph at the cursor (only when the file's spec hash is that of the spec
 * drawn), the event list and the context, all from the file's events. No runtime is asked anything.
 */
export function OfflineView({ drawn }: { drawn: GraphSpec | null }) {
  const events = useInspect((s) => s.events);
  const cursor = useInspect((s) => s.cursor);
  const index = viewedIndex({ events, cursor });
  const view = useSessionAt(events, index);
  const before = useSessionAt(events, index - 1);
  const graph = drawn ? graphOf(drawn.spec) : undefined;
  const marks = useMemo(
    () => (graph && drawn ? graphMarks(graph, drawn.spec.id, events, index, view) : undefined),
    [graph, drawn, events, index, view],
  );
  return (
    <div className="history-offline" data-testid="offline-view">
      <div className="history-offline__graph">{drawn && <InspectGraph spec={drawn.spec} marks={marks} markKey={`file:${view.seq}`} />}</div>
      <div className="history-offline__side">
        <EventList />
        <ContextPanel view={view} before={before} events={events} index={index} />
      </div>
    </div>
  );
}
