import type { Clock } from './clock.ts';

/** A clock that only moves when told to: timeouts, backoff, `after` timers and wake-ups all follow it. */
export interface VirtualClock extends Clock {
  /** Moves time forward by `ms`, firing due timers in order and letting promise chains settle between them. */
  advance(ms: number): Promise<void>;
  /** Fires the earliest timer now, moving time to its due time (false when none is left). */
  fireNext(): boolean;
  /** Timers scheduled and not yet fired or cleared. */
  readonly pending: number;
}

/** Lets the work queued behind resolved promises and I/O callbacks run (`rounds` turns of the event loop). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A virtual clock for tests of code that waits: hand it to `createRuntime({ clock })` and call `advance`.
 * @example
 * const clock = createVirtualClock();
 * const runtime = createRuntime({ machines, clock });
 * await clock.advance(30_000); // the session's `after 30000` transition is taken now
 */
export function createVirtualClock(start = 1_000_000): VirtualClock {
  let now = start;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const earliest = (until = Number.POSITIVE_INFINITY) => {
    let due: [number, { at: number; fn: () => void }] | undefined;
    for (const entry of timers) if (entry[1].at <= until && (!due || entry[1].at < due[1].at)) due = entry;
    return due;
  };
  const fire = (due: [number, { at: number; fn: () => void }]) => {
    timers.delete(due[0]);
    now = Math.max(now, due[1].at);
    due[1].fn();
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(id) {
      timers.delete(id as number);
    },
    get pending() {
      return timers.size;
    },
    async advance(ms) {
      const target = now + ms;
      await settle();
      for (let due = earliest(target); due; due = earliest(target)) {
        fire(due);
        await settle();
      }
      now = target;
    },
    fireNext() {
      const due = earliest();
      if (due) fire(due);
      return due !== undefined;
    },
  };
}
