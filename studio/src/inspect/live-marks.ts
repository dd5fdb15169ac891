/**
 * Performance marks of the live view: when each streamed event reached the page, so the graph can measure the time
 * from an event's arrival (and from its `at` on the runtime's clock) to the frame that shows it highlighted.
 */
const arrivals = new Map<number, number>();
const MAX_KEPT = 2_000;

/** Notes that events arrived now (performance.now()). */
export function noteArrival(seqs: readonly number[]): void {
  const now = performance.now();
  for (const seq of seqs) arrivals.set(seq, now);
  if (arrivals.size > MAX_KEPT) {
    for (const key of [...arrivals.keys()].slice(0, arrivals.size - MAX_KEPT)) arrivals.delete(key);
  }
}

/** Forgets arrivals (another session was selected). */
export function clearArrivals(): void {
  arrivals.clear();
}

/**
 * After the next painted frame, records `flowing:inspect:highlight` from the arrival of event `seq` to that frame,
 * with `detail.sinceEventMs`: milliseconds from the event's `at` (the runtime's clock) to the frame.
 */
export function measureHighlight(seq: number, eventAt: number): void {
  const arrived = arrivals.get(seq);
  if (arrived === undefined) return;
  arrivals.delete(seq);
  // The graph has committed the new marks (React and React Flow are done); painting follows.
  performance.measure('flowing:inspect:commit', { start: arrived, end: performance.now(), detail: { seq } });
  requestAnimationFrame(() => {
    // The frame callback runs before paint; the next task runs after it.
    setTimeout(() => {
      performance.measure('flowing:inspect:highlight', {
        start: arrived,
        end: performance.now(),
        detail: { seq, sinceEventMs: Date.now() - eventAt },
      });
    }, 0);
  });
}
