import { useInspect, viewedIndex } from '../inspect-store.ts';
import { jumpTo, moveCursorTo, stepBy } from './cursor.ts';
import type { JumpTarget } from './jumps.ts';
import { Icon } from '../../components/Icon.tsx';

const JUMPS: Array<{ target: JumpTarget; label: string }> = [
  { target: 'rejection', label: 'rejection' },
  { target: 'tool', label: 'tool call' },
  { target: 'error', label: 'error' },
];

/**
 * The scrubber over the recorded log: first / back / a slider / forward / last, the event under the cursor, "Live"
 * to follow the end again, and jumps to the previous or next rejection, tool call and error.
 */
export function Scrubber({ offline }: { offline: boolean }) {
  const events = useInspect((s) => s.events);
  const cursor = useInspect((s) => s.cursor);
  const index = viewedIndex({ events, cursor });
  const event = index >= 0 ? events[index] : undefined;
  const empty = events.length === 0;
  return (
    <div className="history-scrubber" data-testid="history-scrubber">
      <div className="history-scrubber__row">
        <button
          type="button"
          aria-label="First event"
          title="First event (Home)"
          disabled={empty || index === 0}
          onClick={() => moveCursorTo(0)}
          data-testid="step-first"
        >
          <Icon name="first" />
        </button>
        <button
          type="button"
          aria-label="Step back"
          title="Step back (←)"
          disabled={empty || index === 0}
          onClick={() => stepBy(-1)}
          data-testid="step-back"
        >
          <Icon name="back" />
        </button>
        <input
          type="range"
          aria-label="Event"
          min={0}
          max={Math.max(0, events.length - 1)}
          value={Math.max(0, index)}
          disabled={empty}
          onChange={(e) => moveCursorTo(Number(e.currentTarget.value))}
          data-testid="scrubber"
        />
        <button
          type="button"
          aria-label="Step forward"
          title="Step forward (→)"
          disabled={empty || index === events.length - 1}
          onClick={() => stepBy(1)}
          data-testid="step-forward"
        >
          <Icon name="forward" />
        </button>
        <button
          type="button"
          aria-label="Last event"
          title="Last event (End)"
          disabled={empty || index === events.length - 1}
          onClick={() => moveCursorTo(events.length - 1)}
          data-testid="step-last"
        >
          <Icon name="last" />
        </button>
        {!offline && (
          <button
            type="button"
            className={cursor === null ? 'is-live' : ''}
            disabled={cursor === null}
            onClick={() => useInspect.getState().setCursor(null)}
            data-testid="follow-live"
            title="Follow the live end"
          >
            Live
          </button>
        )}
        <span
          className="history-scrubber__position"
          data-testid="cursor-position"
          data-index={index}
          data-seq={event?.seq ?? 0}
          data-type={event?.type ?? ''}
        >
          {empty ? 'no events' : `event ${index + 1} of ${events.length} · seq ${event!.seq} · ${event!.type}`}
        </span>
      </div>
      <fieldset className="history-scrubber__jumps" aria-label="Jump to">
        {JUMPS.map(({ target, label }) => (
          <span key={target} className="history-jump">
            <button
              type="button"
              disabled={empty}
              onClick={() => jumpTo(target, -1)}
              data-testid={`jump-prev-${target}`}
              title={`Previous ${label}`}
            >
              ‹
            </button>
            <span>{label}</span>
            <button
              type="button"
              disabled={empty}
              onClick={() => jumpTo(target, 1)}
              data-testid={`jump-next-${target}`}
              title={`Next ${label}`}
            >
              ›
            </button>
          </span>
        ))}
      </fieldset>
    </div>
  );
}
