import type { Clock } from '@flowing/runtime';

/** A clock that only moves when told to; `advance` fires due timers in order and lets promise chains settle between them. */
export interface ManualClock extends Clock {
  advance(ms: number): Promise<void>;
  /** Timers scheduled and not yet fired or cleared. */
  readonly pending: number;
}

export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

export function createManualClock(start = 1_000_000): ManualClock {
  let now = start;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
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
      for (;;) {
        let due: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) if (entry[1].at <= target && (!due || entry[1].at < due[1].at)) due = entry;
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
        await settle();
      }
      now = target;
    },
  };
}
