import type { RuntimeEvent } from '@flowing/protocol';
import { useMemo } from 'react';
import { shortId } from '../short-id.ts';
import { childRuns, runsAt } from './child-runs.ts';
import { openSessionAt } from './seek.ts';
import './links.css';

/**
 * The child sessions the selected session started, each with the steps of its log the child ran over; the one that
 * runs at the viewed step is marked, and each opens its child at the parent's time of the viewed step.
 */
export function ChildRuns({ events, index }: { events: readonly RuntimeEvent[]; index: number }) {
  const runs = useMemo(() => childRuns(events), [events]);
  if (runs.length === 0) return null;
  const viewed = events[index];
  return (
    <section className="child-runs" aria-label="child sessions" data-testid="child-runs">
      <h4>Child sessions</h4>
      <ul>
        {runs.map((run) => {
          const active = runsAt(run, index);
          const to = run.end === undefined ? 'now' : `#${events[run.end]!.seq}`;
          return (
            <li
              key={run.childId}
              className={active ? 'child-run child-run--active' : 'child-run'}
              data-testid="child-run"
              data-child={run.childId}
              data-from={events[run.start]!.seq}
              data-to={run.end === undefined ? '' : events[run.end]!.seq}
              data-active={active ? 'true' : 'false'}
            >
              <span className="child-run__machine">▣ {run.machine}</span>
              <span className="child-run__range" title={`call ${run.callId}: from event #${events[run.start]!.seq} to ${to}`}>
                ran #{events[run.start]!.seq}–{to} ({run.outcome}){active ? ' · running at this step' : ''}
              </span>
              <button
                type="button"
                className="link"
                data-testid="open-child"
                disabled={!viewed}
                title={`Open child session ${run.childId} at the time of event #${viewed?.seq ?? '?'} of this session`}
                onClick={() => viewed && void openSessionAt(run.childId, run.machine, { kind: 'time', at: viewed.at })}
              >
                open {shortId(run.childId)} at this step ↗
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
