import { useEffect, useState } from 'react';
import { currentClient, describeFailure } from './inspect-actions.ts';
import type { XStateRecord } from '@flowing/protocol';

type Loaded = { records: XStateRecord[]; dropped: number } | { error: { code: string; message: string } } | undefined;

/** One line per record: what happened, to which actor. */
function recordLine(record: XStateRecord): string {
  const actor = record.actor.root ? 'machine' : `actor ${record.actor.id}`;
  switch (record.type) {
    case '@xstate.microstep':
      return `microstep ${actor}: ${(record.transitions ?? []).map((t) => `${t.event}: ${t.source} → ${t.targets.join(', ') || '(internal)'}`).join('; ')}`;
    case '@xstate.event':
      return `event ${record.event?.type ?? '?'} → ${actor}${record.event?.from ? ` from ${record.event.from}` : ''}`;
    case '@xstate.snapshot':
      return `snapshot ${actor}: ${record.snapshot?.status ?? '?'}${record.snapshot?.value !== undefined ? ` ${JSON.stringify(record.snapshot.value)}` : ''} (after ${record.event?.type ?? '?'})`;
    case '@xstate.actor':
      return `actor started: ${record.actor.id}${record.actor.root ? ' (machine)' : ''}`;
    case '@xstate.action':
      return `action ${record.action?.type ?? '?'} in ${actor}`;
    default:
      return `${record.type} ${actor}`;
  }
}

/**
 * XState's own view of what led to event `seq` of a runtime session: the events, microsteps, child actors and
 * snapshots its inspection reported between event `seq - 1` and this one (from the runtime's in-memory trace).
 */
export function XStateDetails({ sessionId, seq }: { sessionId: string; seq: number }) {
  const [loaded, setLoaded] = useState<Loaded>(undefined);
  useEffect(() => {
    let live = true;
    currentClient()
      .xstateRecords(sessionId, seq - 1)
      .then(
        (answer) => {
          if (live) setLoaded({ records: answer.records.filter((r) => r.afterSeq === seq - 1), dropped: answer.dropped });
        },
        (error: unknown) => {
          if (live) setLoaded({ error: describeFailure(error) });
        },
      );
    return () => {
      live = false;
    };
  }, [sessionId, seq]);
  if (!loaded) return <p className="inspect-xstate muted">XState records…</p>;
  if ('error' in loaded) {
    return (
      <p className="inspect-xstate muted" data-testid="xstate-details" data-code={loaded.error.code}>
        XState records unavailable: {loaded.error.message} ({loaded.error.code})
      </p>
    );
  }
  return (
    <details className="inspect-xstate" data-testid="xstate-details" data-records={loaded.records.length}>
      <summary>
        XState:{' '}
        {loaded.records.length === 0 ? 'nothing reported by this process for this event' : `${loaded.records.length} inspection records`}
      </summary>
      <ol>
        {loaded.records.map((record) => (
          <li key={record.index} data-testid="xstate-record" data-type={record.type} data-root={record.actor.root ? 'true' : 'false'}>
            {recordLine(record)}
          </li>
        ))}
      </ol>
      {loaded.records.length > 0 && <pre className="inspect-event__json">{JSON.stringify(loaded.records, null, 2)}</pre>}
    </details>
  );
}
