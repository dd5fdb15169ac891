import { HistoryPanel } from './history/HistoryPanel.tsx';
import { useInspect } from './inspect-store.ts';

/**
 * The Inspect mode for the open machine: sessions list, run controls, the graph with the active states, the event
 * list and context. The step-through components (owned by the history panel) render in the marked slot.
 */
export function InspectView({ machineId }: { machineId: string | undefined }) {
  const selected = useInspect((s) => s.selectedSessionId);
  return (
    <main className="inspect" data-testid="inspect-view" data-machine={machineId ?? ''}>
      <div className="inspect__body" data-session={selected ?? ''} />
      {/* ── History slot: scrubber, step buttons, timeline, fork, export/open (studio/src/inspect/history/). ── */}
      <HistoryPanel />
    </main>
  );
}
