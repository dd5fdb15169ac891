import { FlowingError } from '../errors.ts';
import type { JournalEntry, ParentLink, SessionRecord, SessionStore } from '../store/types.ts';
import { NO_USAGE, sharedValue, EMPTY_LIST } from './compact.ts';
import type { RunHost } from './host.ts';
import type { KeyedQueue } from './keyed-queue.ts';
import type { HeldLease, LeaseKeeper } from './lease.ts';
import type { MachineInfo } from './machine-info.ts';
import { SessionRun } from './run.ts';
import { TimerWakeups } from './timers.ts';

/** Where a new run starts: a new session's input, or the state another session had (a fork, see planFork). */
export type RunStart =
  | { kind: 'create'; input: unknown; parent?: ParentLink }
  | {
      kind: 'fork';
      parentId: string;
      forkedAt: number;
      state: unknown;
      context: unknown;
      snapshot: unknown;
      timers: ReadonlyArray<{ type: string; delayMs: number }>;
    };

/**
 * The runs of one runtime: the live one of each session being stepped, a few warm ones kept for a quick next event,
 * the session leases (stores with leases), and the timer wake-ups of quiet sessions. Every operation on a session
 * goes through `withRun` or `startRun`, inside the session's turn of the keyed queue.
 */
export class RunPool {
  private readonly live = new Map<string, Promise<SessionRun>>();
  /** Operations waiting for a lease another process holds (before they have a run). */
  private readonly leaseWaits = new Map<string, Promise<unknown>>();
  /** Cancels waiting for an operation that was queued a moment ago to open its run. */
  private readonly openWaiters = new Map<string, Array<() => void>>();
  // A few recently quiet runs stay warm so a follow-up event skips restoring the actor; the store stays the truth.
  private readonly warm = new Map<string, SessionRun>();
  private readonly wakeups: TimerWakeups;

  constructor(
    private readonly host: RunHost,
    private readonly store: SessionStore,
    private readonly queue: KeyedQueue,
    private readonly leases: LeaseKeeper | undefined,
    private readonly warmLimit: number,
  ) {
    // A session waiting for an `after` timer is woken up when it is due, in turn with its other events.
    this.wakeups = new TimerWakeups(host.clock, (id) => queue.run(id, () => this.withRun(id, true, (run) => run.fireTimers())));
    host.onCommitted = (record) => this.wakeups.arm(record.sessionId, record.timers);
  }

  /** The run of a session being stepped now, if any. */
  current(sessionId: string): Promise<SessionRun> | undefined {
    return this.live.get(sessionId);
  }

  /** Restores a stored session (or takes its warm run), runs `fn` on it, then parks it once quiet and committed. */
  async withRun<T>(sessionId: string, start: boolean, fn: (run: SessionRun) => Promise<T>, leaseWaitMs?: number): Promise<T> {
    // Across processes, the lease is what serialises a session's steps; it is taken before the record is read.
    const lease = await this.takeLease(sessionId, leaseWaitMs === undefined ? {} : { waitMs: leaseWaitMs });
    const opening = this.open(sessionId, start, lease?.token).then((run) => underLease(run, lease));
    this.setLive(sessionId, opening);
    let run: SessionRun | undefined;
    try {
      run = await opening;
      return await fn(run);
    } finally {
      if (run) {
        await run.whenQuiet();
        await run.flush();
        this.host.onQuiet?.(sessionId);
        this.park(run);
      }
      if (this.live.get(sessionId) === opening) this.live.delete(sessionId);
      await lease?.release();
      if (run) this.host.onTurnEnd?.(run.log.stored);
    }
  }

  /** Starts a new session (created, or forked from another), waits until it is quiet, and returns its run. */
  async startRun(info: MachineInfo, ids: { sessionId: string; traceId: string }, from: RunStart): Promise<SessionRun> {
    const lease = await this.takeLease(ids.sessionId, { create: true });
    let run: SessionRun;
    try {
      run = underLease(newRun(this.host, info, ids, from), lease);
    } catch (error) {
      await lease?.release();
      throw error;
    }
    const running = Promise.resolve(run);
    this.setLive(ids.sessionId, running);
    try {
      await run.whenQuiet();
      await run.flush();
      this.host.onQuiet?.(ids.sessionId);
    } finally {
      this.park(run);
      if (this.live.get(ids.sessionId) === running) this.live.delete(ids.sessionId);
      await lease?.release();
      this.host.onTurnEnd?.(run.log.stored);
    }
    return run;
  }

  /**
   * Resolves once the session has a run being stepped, or nothing is queued for it any more, or an operation that
   * waited for its lease got it or gave up: whichever comes first.
   */
  async settledOpen(sessionId: string): Promise<void> {
    const waiting = this.leaseWaits.get(sessionId);
    if (waiting) return void (await waiting.catch(() => {}));
    await new Promise<void>((resolve) => {
      const list = this.openWaiters.get(sessionId) ?? [];
      list.push(resolve);
      this.openWaiters.set(sessionId, list);
      // Queued work that ends without opening a run (its lease refused) must not leave this waiter behind.
      void this.queue.whenIdle(sessionId).then(() => {
        const waiting = this.openWaiters.get(sessionId);
        const at = waiting?.indexOf(resolve) ?? -1;
        if (at >= 0) waiting!.splice(at, 1);
        if (waiting?.length === 0) this.openWaiters.delete(sessionId);
        resolve();
      });
    });
  }

  /** True while an operation of the session waits for another process's lease. */
  waitingForLease(sessionId: string): boolean {
    return this.leaseWaits.has(sessionId);
  }

  private setLive(sessionId: string, run: Promise<SessionRun>) {
    this.live.set(sessionId, run);
    const waiters = this.openWaiters.get(sessionId);
    this.openWaiters.delete(sessionId);
    for (const wake of waiters ?? []) wake();
  }

  private async takeLease(sessionId: string, options: { create?: boolean; waitMs?: number }): Promise<HeldLease | undefined> {
    if (!this.leases) return undefined;
    const taking = this.leases.hold(sessionId, options);
    this.leaseWaits.set(sessionId, taking);
    try {
      return await taking;
    } finally {
      if (this.leaseWaits.get(sessionId) === taking) this.leaseWaits.delete(sessionId);
    }
  }

  private park(run: SessionRun) {
    // A run with timers is not kept warm: its timer would fire outside the session's turn; the wake-up fires it.
    if (this.warmLimit <= 0 || run.stopped || run.status !== 'waiting' || run.hasTimers) return run.dispose();
    run.park();
    this.warm.delete(run.sessionId);
    this.warm.set(run.sessionId, run);
    if (this.warm.size > this.warmLimit) {
      const [oldest] = this.warm.values();
      this.warm.delete(oldest!.sessionId);
      oldest!.dispose();
    }
  }

  private async open(sessionId: string, start: boolean, fence: number | undefined): Promise<SessionRun> {
    let record = await this.store.load(sessionId);
    if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${this.store.name} store`);
    if (record.timers) this.wakeups.arm(sessionId, record.timers);
    const parked = this.warm.get(sessionId);
    if (parked) {
      this.warm.delete(sessionId);
      if (parked.version === record.version && start) return parked;
      parked.dispose();
    }
    const info = this.host.machine(record.machineId);
    const active = record.status === 'running' || record.status === 'waiting' || record.status === 'needs_attention';
    if (record.specHash !== info.definition.specHash) {
      // A finished session has nothing to continue: it stays under the version it was recorded with.
      if (!active) throw finishedUnderOtherVersion(record, info);
      const hook = this.host.migrations?.(record.machineId);
      // Loaded on the first session of an older version: a process that never meets one never imports it.
      const { carryOver } = await import('../migrate/carry.ts');
      const carried = await carryOver(this.store, record, info, { now: this.host.clock.now(), fence, ...(hook ? { hook } : {}) });
      record = carried.record;
      this.host.deliver(sessionId, [carried.event]);
    }
    // Only a session stopped mid-run, an agent call waiting for a proposal's approval or a call waiting on a child
    // session (the record lists its calls in flight) needs the journal; idle ones never do.
    const inFlight = record.status === 'running' || record.approval?.callId !== undefined || record.calls !== undefined;
    const journal: readonly JournalEntry[] = inFlight ? await this.store.readJournal(sessionId) : [];
    const startNow = start && (record.status === 'running' || record.status === 'waiting');
    const run = new SessionRun(this.host, info, record, journal, !startNow);
    if (startNow) run.start({ snapshot: record.snapshot });
    return run;
  }
}

function finishedUnderOtherVersion(record: SessionRecord, info: MachineInfo): FlowingError {
  return new FlowingError(
    'SPEC_CHANGED',
    `session '${record.sessionId}' ended under another version of '${record.machineId}' (spec hash ${record.specHash.slice(0, 12)}, now ${info.definition.specHash.slice(0, 12)}); a finished session is not carried onto the new graph`,
    { details: { sessionId: record.sessionId, fromVersion: record.specHash, toVersion: info.definition.specHash, reasons: [] } },
  );
}

/** Makes a run's commits carry the lease's token, and stops the run (writing nothing more) if the lease is lost. */
function underLease(run: SessionRun, lease: HeldLease | undefined): SessionRun {
  if (!lease) return run;
  run.log.fence = lease.token;
  lease.onLost((error) => run.abandon(error));
  return run;
}

/**
 * A new session's run. A created one logs `session.started` and starts with its input. A fork names its parent,
 * logs a `state.changed` (event `flowing.fork`) setting the state and context, then starts there: the state's entry
 * actions do not run again, the calls it invokes start now and are the fork's own (keys `<invoke>@1`), and its
 * `after` timers start now with their full delay.
 */
function newRun(host: RunHost, info: MachineInfo, ids: { sessionId: string; traceId: string }, from: RunStart): SessionRun {
  const now = host.clock.now();
  const { id: machineId, specHash } = info.definition;
  const record: SessionRecord = {
    sessionId: ids.sessionId,
    machineId,
    specHash,
    traceId: ids.traceId,
    status: 'running',
    version: 0,
    seq: 0,
    step: 0,
    snapshot: undefined,
    usage: NO_USAGE,
    createdAt: now,
    updatedAt: now,
  };
  if (from.kind === 'create') {
    if (from.parent) record.parent = from.parent;
    const run = new SessionRun(host, info, record, []);
    const parent = from.parent && {
      parentId: from.parent.sessionId,
      parentState: from.parent.state,
      parentCallId: from.parent.callId,
      depth: from.parent.depth,
    };
    run.append('session.started', { machineId, specHash, input: from.input ?? null, ...parent });
    run.start({ input: from.input });
    return run;
  }
  record.fork = { parentId: from.parentId, forkedAt: from.forkedAt };
  // The fork enters the state now: its timers start now, armed like a restored session's.
  if (from.timers.length > 0) record.timers = Object.fromEntries(from.timers.map((timer) => [timer.type, now + timer.delayMs]));
  const run = new SessionRun(host, info, record, []);
  run.append('session.started', { machineId, specHash, input: null, parentId: from.parentId, forkedAt: from.forkedAt });
  run.step = 1;
  run.append('state.changed', {
    state: sharedValue(info, from.state),
    event: 'flowing.fork',
    transitions: EMPTY_LIST,
    context: from.context,
  });
  run.start({ snapshot: from.snapshot });
  const snapshot = run.snapshot;
  if (snapshot && !run.stopped) run.watchApprovals(snapshot);
  return run;
}
