import type { Actor, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import type { Clock } from '../clock.ts';
import { activeNodes, cancelOwnEvent, scheduledEvents, scheduleOwnEvent, type ScheduledEvent } from '../xstate-adapter.ts';

/**
 * Deadlines of a session's pending `after` transitions: the delayed event's type (`xstate.after.<delay>.<state id>`,
 * also the id XState schedules it under) to the clock time it is due. Stored with the session record.
 */
export type TimerDeadlines = Readonly<Record<string, number>>;

const AFTER = 'xstate.after.';

/**
 * The `after` timers of one session's actor. XState keeps them in its system's scheduler but not in the persisted
 * snapshot, and restoring a snapshot does not run entry actions again, so without the deadlines kept here (and
 * stored with the record) a restored session would wait in a timed state for ever.
 */
export class TimerTracker {
  /** What was seen of each scheduled delayed event, so a deadline stays put across commits. */
  private readonly seen = new Map<string, { startedAt: number; delay: number; due: number }>();

  constructor(
    private readonly actor: Actor<AnyStateMachine>,
    private readonly clock: Clock,
  ) {}

  /**
   * Fixes the deadline of every delayed transition the actor scheduled since the last look: the runtime clock now
   * plus its delay. Called right after each transition (XState schedules during it, and stamps `startedAt` with
   * Date.now() rather than the runtime's clock, so its own stamp is not used).
   */
  track(): void {
    const scheduled = scheduledEvents(this.actor);
    for (const id in scheduled) {
      const entry = scheduled[id]!;
      if (!this.isAfterTimer(entry)) continue;
      const before = this.seen.get(entry.id);
      if (before && before.startedAt === entry.startedAt && before.delay === entry.delay) continue;
      this.seen.set(entry.id, { startedAt: entry.startedAt, delay: entry.delay, due: this.clock.now() + entry.delay });
    }
  }

  /** The deadlines of the delayed transitions the actor has scheduled now, for the stored record. */
  deadlines(): TimerDeadlines | undefined {
    this.track();
    const scheduled = scheduledEvents(this.actor);
    let deadlines: Record<string, number> | undefined;
    for (const id in scheduled) {
      const entry = scheduled[id]!;
      if (!this.isAfterTimer(entry)) continue;
      (deadlines ??= {})[entry.id] = this.seen.get(entry.id)!.due;
    }
    return deadlines;
  }

  /**
   * Schedules the delayed transitions of a restored actor again, each with the time left until its stored deadline (0
   * when it passed while the session was not running), under the id XState's exit action cancels. Only deadlines of
   * states the snapshot is still in are armed.
   */
  rearm(deadlines: TimerDeadlines | undefined): void {
    if (!deadlines) return;
    const active = new Set(activeNodes(this.actor.getSnapshot() as AnyMachineSnapshot).map((node) => node.id));
    const now = this.clock.now();
    for (const [type, due] of Object.entries(deadlines)) {
      if (!active.has(stateIdOf(type))) continue;
      const delay = Math.max(0, due - now);
      scheduleOwnEvent(this.actor, type, delay);
      const entry = Object.values(scheduledEvents(this.actor)).find((e) => e.source === this.actor && e.id === type);
      if (entry) this.seen.set(type, { startedAt: entry.startedAt, delay, due });
    }
  }

  /**
   * Delivers the delayed events that are due now (their deadline passed) at once, in deadline order, instead of
   * waiting for the clock's timer: a session woken up for its timer takes the transition within the wake-up.
   * Returns how many it delivered.
   */
  fireDue(deadlines: TimerDeadlines | undefined): number {
    if (!deadlines) return 0;
    const now = this.clock.now();
    const due = Object.entries(deadlines)
      .filter(([, at]) => at <= now)
      .sort((a, b) => a[1] - b[1]);
    let fired = 0;
    for (const [type] of due) {
      const pending = Object.values(scheduledEvents(this.actor)).some((entry) => entry.source === this.actor && entry.id === type);
      // Gone when an earlier delayed transition left the state (its exit cancelled this one).
      if (!pending) continue;
      cancelOwnEvent(this.actor, type);
      this.actor.send({ type });
      fired++;
    }
    return fired;
  }

  /** A delayed transition of the actor itself (`after`), scheduled under its event type as XState does. */
  private isAfterTimer(entry: ScheduledEvent): boolean {
    return (
      entry.source === this.actor && entry.target === this.actor && entry.event.type.startsWith(AFTER) && entry.id === entry.event.type
    );
  }
}

/** The earliest deadline, or undefined when there is none. */
export function nextDeadline(deadlines: TimerDeadlines | undefined): number | undefined {
  let next: number | undefined;
  for (const at of Object.values(deadlines ?? {})) if (next === undefined || at < next) next = at;
  return next;
}

/** `xstate.after.<delay>.<state id>` → `<state id>` (a delay is a number or a named delay without dots). */
function stateIdOf(type: string): string {
  const rest = type.slice(AFTER.length);
  return rest.slice(rest.indexOf('.') + 1);
}

/** Codes after which waking a session again cannot help (it is gone, or its machine changed). */
const FINAL_WAKE_FAILURES = new Set(['SESSION_NOT_FOUND', 'SPEC_CHANGED', 'UNKNOWN_MACHINE', 'FLOW_STORE_CORRUPT']);

/** How long a wake-up that failed on the store waits before it tries again. */
export const WAKE_RETRY_MS = 1_000;

/**
 * One wake-up per session that has a timer pending, at its earliest deadline, on the runtime's clock. A session
 * waiting in a timed state is quiet (its status `waiting`) and usually not held in memory: the wake-up restores it
 * and delivers what is due. Armed from every record the runtime commits or loads; a wake-up that fails on the store
 * tries again after WAKE_RETRY_MS (the deadlines stay in the record, so a restart finds them too).
 */
export class TimerWakeups {
  private readonly armed = new Map<string, { at: number; handle: unknown }>();

  constructor(
    private readonly clock: Clock,
    private readonly wake: (sessionId: string) => Promise<unknown>,
  ) {}

  /** Sets (or moves, or clears) the wake-up of a session to the earliest of its deadlines. */
  arm(sessionId: string, deadlines: TimerDeadlines | undefined): void {
    this.armAt(sessionId, nextDeadline(deadlines));
  }

  private armAt(sessionId: string, at: number | undefined): void {
    const current = this.armed.get(sessionId);
    if (current && current.at === at) return;
    if (current) this.clock.clearTimeout(current.handle);
    if (at === undefined) {
      this.armed.delete(sessionId);
      return;
    }
    const handle = this.clock.setTimeout(
      () => {
        if (this.armed.get(sessionId)?.handle !== handle) return;
        this.armed.delete(sessionId);
        // Timers may fire a little early (millisecond rounding); waking now would find nothing due and drop the timer.
        if (this.clock.now() < at) return this.armAt(sessionId, at);
        this.wake(sessionId).catch((error: { code?: unknown }) => {
          if (typeof error?.code === 'string' && FINAL_WAKE_FAILURES.has(error.code)) return;
          if (!this.armed.has(sessionId)) this.armAt(sessionId, this.clock.now() + WAKE_RETRY_MS);
        });
      },
      Math.max(0, at - this.clock.now()),
    );
    // A wake-up alone does not keep a process alive (a one-shot `flowing run` exits; a server has its socket).
    (handle as { unref?: () => void } | null)?.unref?.();
    this.armed.set(sessionId, { at, handle });
  }

  /** Sessions with a wake-up armed. */
  get size(): number {
    return this.armed.size;
  }
}
