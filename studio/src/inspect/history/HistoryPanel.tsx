/**
 * Placeholder for the step-through panel (scrubber, step buttons, timeline, fork, file export/open). It reads the
 * Inspect store (`useInspect`: events, cursor, setCursor) and `sessionAt` from '../fold.ts'.
 */
export function HistoryPanel() {
  return <section className="inspect-history" data-testid="history-panel" aria-label="history" />;
}
