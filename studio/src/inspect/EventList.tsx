import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState } from 'react';
import { summarize, timeText, toneOf } from './event-summary.ts';
import { useInspect, viewedIndex } from './inspect-store.ts';
import { EventLink } from './links/EventLink.tsx';
import { XStateDetails } from './XStateDetails.tsx';

const ROW_HEIGHT = 26;

/**
 * Every event of the selected session: type, time and a one-line summary, expandable to its JSON (and, for a runtime
 * session, the XState inspection records that led to it); refusals in red
 * with their code and reason; a channel message or a child session's call links to the other session. Virtualised
 * (only the rows in view are in the DOM), so 10,000 events scroll smoothly.
 * Clicking a row moves every view to that event; following the live end keeps the newest row in view.
 */
export function EventList() {
  const events = useInspect((s) => s.events);
  const cursor = useInspect((s) => s.cursor);
  const setCursor = useInspect((s) => s.setCursor);
  // XState's low-level records exist for sessions of a running runtime, not for a session opened from a file.
  const sessionId = useInspect((s) => s.selectedSessionId);
  const viewed = viewedIndex({ events, cursor });
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(new Set());
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: events.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    getItemKey: (index) => events[index]?.seq ?? index,
  });

  // Following the live end: keep the newest event in view as events arrive.
  useEffect(() => {
    if (cursor === null && events.length > 0) virtualizer.scrollToIndex(events.length - 1, { align: 'end' });
  }, [events.length, cursor, virtualizer]);
  useEffect(() => {
    if (cursor !== null) virtualizer.scrollToIndex(cursor, { align: 'auto' });
  }, [cursor, virtualizer]);

  const toggle = (seq: number) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (next.has(seq)) next.delete(seq);
      else next.add(seq);
      return next;
    });

  return (
    <section className="inspect-events" aria-label="events">
      <header className="inspect-events__head">
        <h3>Events</h3>
        <span
          data-testid="inspect-event-count"
          data-count={events.length}
          data-first-seq={events[0]?.seq ?? 0}
          data-last-seq={events[events.length - 1]?.seq ?? 0}
        >
          {events.length}
        </span>
        {cursor !== null && (
          <button type="button" onClick={() => setCursor(null)} data-testid="inspect-follow-live" title="follow the newest event">
            Live ⇥
          </button>
        )}
      </header>
      <div className="inspect-events__scroller" ref={scroller} data-testid="inspect-events">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const event = events[item.index]!;
            const tone = toneOf(event.type);
            const open = expanded.has(event.seq);
            const d = event.data;
            return (
              <div
                key={item.key}
                ref={virtualizer.measureElement}
                data-index={item.index}
                className={`inspect-event inspect-event--${tone}${item.index === viewed ? ' inspect-event--viewed' : ''}`}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${item.start}px)` }}
                data-testid="inspect-event"
                data-seq={event.seq}
                data-type={event.type}
                data-code={tone === 'rejected' ? String(d.code ?? '') : undefined}
              >
                <button
                  type="button"
                  className="inspect-event__line"
                  aria-expanded={open}
                  onClick={() => {
                    setCursor(item.index === events.length - 1 ? null : item.index);
                    toggle(event.seq);
                  }}
                >
                  <span className="inspect-event__seq">{event.seq}</span>
                  <span className="inspect-event__type">{event.type}</span>
                  <span className="inspect-event__time">{timeText(event.at)}</span>
                  {tone === 'rejected' && (
                    <span className="inspect-event__code" data-testid="inspect-rejected-code">
                      {String(d.code ?? '')}
                    </span>
                  )}
                  <span className="inspect-event__summary" title={summarize(event)}>
                    {summarize(event)}
                  </span>
                </button>
                {sessionId !== null && <EventLink event={event} />}
                {open && (
                  <pre className="inspect-event__json" data-testid="inspect-event-json">
                    {JSON.stringify(event, null, 2)}
                  </pre>
                )}
                {open && sessionId !== null && <XStateDetails sessionId={sessionId} seq={event.seq} />}
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
