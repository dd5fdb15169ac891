import { createVirtualClock, type VirtualClock } from '../virtual-clock.ts';
import { TestingError } from './errors.ts';

/** How long a replay may wait in real time for a step that makes no progress and has no timer left. */
const STUCK_AFTER_MS = 5_000;
/**
 * Turns of the event loop without progress after which the session counts as blocked on a timer: commits and answer
 * hand-overs take a few macrotasks, and firing a timeout too early would change what the session does.
 */
const IDLE_ROUNDS = 50;

/** A virtual clock whose time jumps to the next timer whenever nothing else can happen (simulated time). */
export interface ReplayClock extends VirtualClock {
  /**
   * Waits for `work`, firing due timers in time order while it is blocked on them; REPLAY_STUCK when blocked on
   * nothing. `unblock`, tried before a timer fires, may let something else happen instead (true when it did).
   */
  runUntil<T>(work: Promise<T>, what: string, unblock?: () => boolean): Promise<T>;
}

/**
 * Replays must not wait for real time (backoff, `after` timeouts, a call that never answered while a timer runs), and
 * must end the same way every time: time only moves when the session has nothing else to do.
 */
export function createReplayClock(start = 0): ReplayClock {
  const clock = createVirtualClock(start);
  return Object.assign(clock, {
    async runUntil<T>(work: Promise<T>, what: string, unblock?: () => boolean): Promise<T> {
      let settled = false;
      work.then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      let idleSince = Date.now();
      for (;;) {
        for (let i = 0; i < IDLE_ROUNDS && !settled; i++) await new Promise((resolve) => setImmediate(resolve));
        if (settled) return work;
        if (unblock?.() || clock.fireNext()) {
          idleSince = Date.now();
          continue;
        }
        if (Date.now() - idleSince > STUCK_AFTER_MS) {
          throw new TestingError('REPLAY_STUCK', `${what} did not settle within ${STUCK_AFTER_MS} ms and no timer is left to fire`);
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    },
  });
}
