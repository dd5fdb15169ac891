import './history.css';
import { useEffect, useRef } from 'react';
import { useInspect, viewedIndex } from '../inspect-store.ts';
import { AtCursor } from './AtCursor.tsx';
import { FileControls } from './FileControls.tsx';
import { FoldCache } from './fold-cache.ts';
import { ForkDialog } from './ForkDialog.tsx';
import { useHistory } from './history-store.ts';
import { OfflineView } from './OfflineView.tsx';
import { measureFileAfterPaint, measureStepAfterPaint } from './perf.ts';
import { Scrubber } from './Scrubber.tsx';
import { Timeline } from './Timeline.tsx';
import { useHistoryKeys } from './useHistoryKeys.ts';

/** "Forked from <parent> at seq N", from the fork's `session.started` event; a click opens the parent. */
function ParentLink({ data }: { data: Record<string, unknown> | undefined }) {
  const parentId = typeof data?.parentId === 'string' ? data.parentId : undefined;
  // A child session names its parent too (with the invoking call): links/ParentRun.tsx shows that one.
  if (!parentId || data?.parentCallId !== undefined) return null;
  const forkedAt = typeof data?.forkedAt === 'number' ? data.forkedAt : undefined;
  return (
    <span className="history-parent" data-testid="parent-link" data-parent={parentId} data-forked-at={forkedAt ?? ''}>
      forked from{' '}
      <button type="button" className="link" onClick={() => useInspect.getState().selectSession(parentId)}>
        {parentId}
      </button>
      {forkedAt !== undefined && ` at seq ${forkedAt}`}
    </span>
  );
}

/**
 * The step-through panel of the Inspect mode: export / open a session file, the scrubber with step and jump buttons
 * (←/→, Home/End), the session at the cursor, the call timeline and "Fork here". Everything is computed from the log
 * in memory; stepping makes no request.
 */
export function HistoryPanel() {
  const events = useInspect((s) => s.events);
  const cursor = useInspect((s) => s.cursor);
  const sessionId = useInspect((s) => s.selectedSessionId);
  const file = useHistory((s) => s.file);
  const specNotice = useHistory((s) => s.specNotice);
  const fileGraph = useHistory((s) => s.fileGraph);
  const error = useHistory((s) => s.error);
  const forkAt = useHistory((s) => s.forkAt);
  const cache = useRef(new FoldCache()).current;
  const index = viewedIndex({ events, cursor });
  const view = cache.at(events, index);
  useHistoryKeys();

  useEffect(() => {
    // Choosing a runtime session leaves the file.
    if (sessionId !== null && useHistory.getState().file) useHistory.getState().setFile(null);
  }, [sessionId]);
  useEffect(() => {
    if (file) measureFileAfterPaint();
  }, [file]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new cursor or log is the trigger: the step is measured after the render that shows it
  useEffect(() => {
    measureStepAfterPaint();
  }, [index, events]);

  const forkEvent = forkAt === null ? undefined : events[forkAt];
  return (
    <section
      className="inspect-history"
      data-testid="history-panel"
      aria-label="history"
      data-offline={file ? 'true' : 'false'}
      data-events={events.length}
    >
      <div className="history-bar">
        <FileControls />
        <ParentLink data={events[0]?.type === 'session.started' ? events[0].data : undefined} />
        {sessionId && !file && (
          <button
            type="button"
            disabled={index < 0}
            onClick={() => useHistory.getState().openFork(index)}
            data-testid="fork-here"
            title="Start a new session at the state and context of this event"
          >
            Fork here
          </button>
        )}
      </div>
      {specNotice && (
        <p className="history-notice" role="status" data-testid="spec-notice" data-code={specNotice.code}>
          {specNotice.message} ({specNotice.code})
        </p>
      )}
      {error && (
        <p className="history-error" role="alert" data-testid="history-error" data-code={error.code}>
          {error.message} ({error.code})
          <button type="button" className="link" onClick={() => useHistory.getState().setError(null)}>
            dismiss
          </button>
        </p>
      )}
      {file && sessionId === null && <OfflineView drawn={fileGraph} />}
      <Scrubber offline={file !== null} />
      {events.length > 0 && (
        <div className="history-details">
          <AtCursor view={view} />
          <Timeline events={events} index={index} />
        </div>
      )}
      {forkEvent && sessionId && (
        <ForkDialog key={forkAt} sessionId={sessionId} event={forkEvent} context={cache.at(events, forkAt!).context} />
      )}
    </section>
  );
}
