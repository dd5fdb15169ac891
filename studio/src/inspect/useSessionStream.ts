import { useEffect } from 'react';
import { openSessionStream } from './event-stream.ts';
import { clientFor, describeFailure } from './inspect-actions.ts';
import { useInspect } from './inspect-store.ts';
import { clearArrivals, noteArrival } from './live-marks.ts';

/**
 * Follows the selected session: reads its stored log page by page, then streams what follows (SSE, resumed after a
 * dropped connection). Switching sessions or sources closes the previous stream.
 */
export function useSessionStream(): void {
  const sessionId = useInspect((s) => s.selectedSessionId);
  const source = useInspect((s) => s.source);
  useEffect(() => {
    if (!sessionId) return;
    clearArrivals();
    const store = useInspect.getState();
    const client = clientFor(source);
    let close: (() => void) | undefined;
    let stopped = false;
    store.setStreamState('connecting');
    void (async () => {
      let after = 0;
      try {
        for (;;) {
          const page = await client.readEvents(sessionId, after, 1000);
          if (stopped) return;
          useInspect.getState().appendEvents(page.events);
          after = page.events.length > 0 ? page.events[page.events.length - 1]!.seq : after;
          if (page.nextAfter === undefined || page.events.length === 0) break;
        }
      } catch (error) {
        const { code, message } = describeFailure(error);
        useInspect.getState().setStreamState('error');
        useInspect.getState().setSourceError(`${code}: ${message}`);
        return;
      }
      close = openSessionStream(client.endpoint, sessionId, after, {
        onEvents(events) {
          noteArrival(events.map((e) => e.seq));
          useInspect.getState().appendEvents(events);
        },
        onState(state, detail) {
          useInspect.getState().setStreamState(state);
          if (state === 'error' && detail) useInspect.getState().setSourceError(detail);
        },
      });
    })();
    return () => {
      stopped = true;
      close?.();
    };
  }, [sessionId, source]);
}
