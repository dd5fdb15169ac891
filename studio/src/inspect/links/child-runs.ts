import type { RuntimeEvent } from '@flowing/protocol';

/** Where in a parent's log one of its child sessions ran: from `machine.started` to its `machine.done` or `.failed`. */
export interface ChildRun {
  childId: string;
  machine: string;
  /** The journal key of the machine call (`<state>@<step>`). */
  callId: string;
  /** Indexes into the parent's events. */
  start: number;
  /** Undefined while the child has not ended. */
  end: number | undefined;
  outcome: 'running' | 'done' | 'failed';
}

/** Every child session a log started, in order, with the range of the log it ran over. */
export function childRuns(events: readonly RuntimeEvent[]): ChildRun[] {
  const runs: ChildRun[] = [];
  const open = new Map<string, ChildRun>();
  events.forEach((event, index) => {
    const d = event.data as { childId?: unknown; machine?: unknown; callId?: unknown };
    if (typeof d.childId !== 'string') return;
    if (event.type === 'machine.started') {
      // A resumed call logs its start again for the same child: one run.
      if (open.has(d.childId)) return;
      const run: ChildRun = {
        childId: d.childId,
        machine: String(d.machine),
        callId: String(d.callId),
        start: index,
        end: undefined,
        outcome: 'running',
      };
      runs.push(run);
      open.set(d.childId, run);
    } else if (event.type === 'machine.done' || event.type === 'machine.failed') {
      const run = open.get(d.childId);
      if (!run) return;
      run.end = index;
      run.outcome = event.type === 'machine.done' ? 'done' : 'failed';
      open.delete(d.childId);
    }
  });
  return runs;
}

/** Whether the parent's event at `index` falls inside the run (the child exists and has not ended yet there). */
export function runsAt(run: ChildRun, index: number): boolean {
  return index >= run.start && (run.end === undefined || index <= run.end);
}

/**
 * The index of the child's event at the parent's time `at`: the child's last event logged at or before it (both logs
 * take their times from the one runtime clock); 0 when the child had logged nothing yet.
 */
export function indexAtTime(events: readonly RuntimeEvent[], at: number): number {
  let found = 0;
  for (let i = 0; i < events.length; i++) {
    if (events[i]!.at > at) break;
    found = i;
  }
  return found;
}

/** The other session's event that carries the same channel message: its `channel.received` for a sent one, and back. */
export function messageMatch(
  event: RuntimeEvent,
): { sessionId: string; type: 'channel.sent' | 'channel.received'; messageId: string } | undefined {
  const d = event.data as { messageId?: unknown; to?: unknown; from?: unknown };
  if (typeof d.messageId !== 'string') return undefined;
  if (event.type === 'channel.sent' && typeof d.to === 'string')
    return { sessionId: d.to, type: 'channel.received', messageId: d.messageId };
  if (event.type === 'channel.received' && typeof d.from === 'string')
    return { sessionId: d.from, type: 'channel.sent', messageId: d.messageId };
  return undefined;
}
