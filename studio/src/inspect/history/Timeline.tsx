import type { RuntimeEvent } from '@flowing/protocol';
import { memo, useMemo } from 'react';
import { shortJson } from './AtCursor.tsx';
import { moveCursorTo } from './cursor.ts';
import { useHistory } from './history-store.ts';
import { callBars, timelineLanes, type CallBar, type TimelineLane } from './timeline.ts';

/** Where an event sits on the chart's x axis, 0 to 1 across the window: by its index, or by its time. */
type Scale = (index: number) => number;

/** Logs up to this long are drawn whole; longer ones in a window of this many events around the cursor. */
export const TIMELINE_WINDOW = 600;
/** The window moves in steps of this many events, so stepping redraws the bars only when it crosses one. */
const WINDOW_STEP = 150;

/** The events the chart spans: the whole log, or a window around the cursor (snapped, so it rarely moves). */
export function timelineWindow(length: number, index: number): { first: number; last: number } {
  if (length <= TIMELINE_WINDOW) return { first: 0, last: Math.max(0, length - 1) };
  const centred = Math.max(0, index) - TIMELINE_WINDOW / 2;
  const first = Math.max(0, Math.min(length - TIMELINE_WINDOW, Math.round(centred / WINDOW_STEP) * WINDOW_STEP));
  return { first, last: first + TIMELINE_WINDOW - 1 };
}

function scaleFor(events: readonly RuntimeEvent[], axis: 'events' | 'time', first: number, last: number): Scale {
  if (last <= first) return () => 0;
  const clamp = (index: number) => Math.max(first, Math.min(last, index));
  if (axis === 'events') return (index) => (clamp(index) - first) / (last - first);
  const t0 = events[first]!.at;
  const span = Math.max(1, events[last]!.at - t0);
  return (index) => (events[clamp(index)]!.at - t0) / span;
}

const barKey = (bar: CallBar) => `${bar.kind}:${bar.id}`;
const pct = (x: number) => `${(x * 100).toFixed(3)}%`;

function barTitle(bar: CallBar, events: readonly RuntimeEvent[]): string {
  const end = bar.endIndex === undefined ? 'not ended' : `${events[bar.endIndex]!.at - bar.startAt} ms`;
  const retries = bar.retries.length > 0 ? `, ${bar.retries.length} retr${bar.retries.length === 1 ? 'y' : 'ies'}` : '';
  return `${bar.kind} ${bar.name}: ${bar.outcome} (${end}${retries})`;
}

/** The lanes and bars: drawn once per log and axis (moving the cursor re-renders only the cursor line). */
const Lanes = memo(function Lanes({
  lanes,
  events,
  scale,
  selected,
  first,
  last,
}: {
  lanes: TimelineLane[];
  events: readonly RuntimeEvent[];
  scale: Scale;
  selected: string | null;
  first: number;
  last: number;
}) {
  const end = events.length - 1;
  return (
    <>
      {lanes.map((lane) => (
        <div key={lane.key} className="tl-lane" data-testid="timeline-lane" data-lane={lane.key}>
          <span className={`tl-lane__name tl-lane__name--${lane.kind}`} title={`${lane.kind} ${lane.name}`}>
            {lane.kind === 'approval' ? 'approve' : lane.kind} {lane.name}
          </span>
          <div className="tl-lane__track">
            {lane.bars
              .filter((bar) => bar.startIndex <= last && (bar.endIndex ?? end) >= first)
              .map((bar) => {
                const x0 = scale(bar.startIndex);
                const x1 = scale(bar.endIndex ?? end);
                const key = barKey(bar);
                return (
                  <button
                    key={key}
                    type="button"
                    className={`tl-bar tl-bar--${bar.kind} tl-bar--${bar.outcome}${selected === key ? ' is-selected' : ''}`}
                    style={{ left: pct(x0), width: pct(Math.max(0, x1 - x0)) }}
                    title={barTitle(bar, events)}
                    data-testid="timeline-bar"
                    data-call={bar.id}
                    data-kind={bar.kind}
                    data-name={bar.name}
                    data-outcome={bar.outcome}
                    data-start-index={bar.startIndex}
                    onClick={() => {
                      useHistory.getState().selectBar(key);
                      moveCursorTo(bar.startIndex);
                    }}
                  >
                    {bar.retries.map((retry) => (
                      <span
                        key={retry.index}
                        className="tl-bar__retry"
                        style={{ left: pct(x1 > x0 ? (scale(retry.index) - x0) / (x1 - x0) : 0) }}
                      />
                    ))}
                  </button>
                );
              })}
          </div>
        </div>
      ))}
    </>
  );
});

function SeqLink({ index, events, label }: { index: number; events: readonly RuntimeEvent[]; label: string }) {
  return (
    <button type="button" className="link" onClick={() => moveCursorTo(index)} data-testid={`call-${label}`}>
      {label} seq {events[index]!.seq}
    </button>
  );
}

/** What the selected bar stands for: times, attempts, retries (each a link to its event), input, output, error. */
function CallDetails({ bar, events }: { bar: CallBar; events: readonly RuntimeEvent[] }) {
  const duration = bar.endAt === undefined ? undefined : bar.endAt - bar.startAt;
  return (
    <div className="tl-details" data-testid="call-details" data-call={bar.id} data-outcome={bar.outcome}>
      <div className="tl-details__line">
        <strong>{bar.kind === 'approval' ? `approval for ${bar.name}` : `${bar.kind} ${bar.name}`}</strong>
        <span className={`tl-outcome tl-outcome--${bar.outcome}`}>{bar.outcome.replace('_', ' ')}</span>
        <SeqLink index={bar.startIndex} events={events} label="start" />
        {bar.endIndex !== undefined && <SeqLink index={bar.endIndex} events={events} label="end" />}
        <span>
          {duration === undefined ? 'still running at the end of the log' : `${duration} ms${bar.kind === 'approval' ? ' waited' : ''}`}
        </span>
        {bar.kind === 'tool' && (
          <span>
            {bar.attempts} attempt{bar.attempts === 1 ? '' : 's'}
          </span>
        )}
        {bar.resumed && <span title="started again after a restart">resumed</span>}
      </div>
      {bar.retries.length > 0 && (
        <ol className="tl-details__retries">
          {bar.retries.map((retry) => (
            <li key={retry.index}>
              <button type="button" className="link" onClick={() => moveCursorTo(retry.index)}>
                retry → attempt {retry.attempt}
              </button>{' '}
              after {shortJson((retry.error as { code?: unknown })?.code ?? retry.error, 0)}
              {retry.delayMs !== undefined ? `, waited ${retry.delayMs} ms` : ''}
            </li>
          ))}
        </ol>
      )}
      <div className="tl-details__json">
        {bar.input !== undefined && (
          <div>
            <span>{bar.kind === 'llm' ? 'model' : bar.kind === 'approval' ? 'arguments' : 'input'}</span>
            <pre data-testid="call-input">{shortJson(bar.input)}</pre>
          </div>
        )}
        {bar.output !== undefined && (
          <div>
            <span>{bar.kind === 'approval' ? 'decision' : 'output'}</span>
            <pre data-testid="call-output">{shortJson(bar.output)}</pre>
          </div>
        )}
        {bar.error !== undefined && (
          <div>
            <span>error</span>
            <pre className="is-error" data-testid="call-error">
              {shortJson(bar.error)}
            </pre>
          </div>
        )}
      </div>
    </div>
  );
}

/**
 * Tool calls, model calls and approvals as bars on lanes (one per tool, model call kind and approved tool): start,
 * end, retries (ticks), failures and approvals waited, with the cursor as a line. Selecting a bar moves the cursor to
 * its start and shows its inputs, outputs and errors. A long log is drawn in a window around the cursor, so the page
 * holds a few hundred bars, not thousands (each one is laid out on every step otherwise).
 */
export function Timeline({ events, index }: { events: readonly RuntimeEvent[]; index: number }) {
  const axis = useHistory((s) => s.timeAxis);
  const selected = useHistory((s) => s.selectedBar);
  const bars = useMemo(() => callBars(events), [events]);
  const lanes = useMemo(() => timelineLanes(bars), [bars]);
  const { first, last } = timelineWindow(events.length, index);
  const scale = useMemo(() => scaleFor(events, axis, first, last), [events, axis, first, last]);
  const selectedBar = selected === null ? undefined : bars.find((b) => barKey(b) === selected);
  return (
    <div className="history-timeline" data-testid="history-timeline" data-bars={bars.length}>
      <div className="history-timeline__head">
        <span>
          Calls ({bars.length})
          {(first > 0 || last < events.length - 1) && (
            <span className="muted" data-testid="timeline-window">
              {' '}
              · events {first + 1}–{last + 1} of {events.length} (follows the cursor)
            </span>
          )}
        </span>
        <label>
          x axis{' '}
          <select
            value={axis}
            onChange={(e) => useHistory.getState().setTimeAxis(e.currentTarget.value as 'events' | 'time')}
            aria-label="Timeline axis"
          >
            <option value="events">event order</option>
            <option value="time">time</option>
          </select>
        </label>
      </div>
      {bars.length === 0 ? (
        <p className="muted">No tool or model call in this log.</p>
      ) : (
        <div className="history-timeline__chart">
          <Lanes lanes={lanes} events={events} scale={scale} selected={selected} first={first} last={last} />
          {index >= 0 && (
            <div
              className="tl-cursor"
              style={{ left: `calc(var(--tl-name-width) + (100% - var(--tl-name-width)) * ${scale(index).toFixed(5)})` }}
              data-testid="timeline-cursor"
            />
          )}
        </div>
      )}
      {selectedBar && <CallDetails bar={selectedBar} events={events} />}
    </div>
  );
}
