import { createActor, type Actor, type AnyMachineSnapshot, type AnyStateMachine, type InspectionEvent } from 'xstate';
import { toFlowError, type FlowError } from '../errors.ts';
import { xstateClock } from '../clock.ts';
import { freezeEvent, type RuntimeEvent, type RuntimeEventType } from '../events.ts';
import type { ApprovalRecord, JournalEntry, SessionRecord, SessionStatus } from '../store/types.ts';
import { approvalRequest, decideApproval } from './approvals.ts';
import { compactSnapshot, EMPTY_LIST, NO_USAGE, sharedValue } from './compact.ts';
import type { RunHost, XStateInspector } from './host.ts';
import type { MachineInfo } from './machine-info.ts';
import { thrownError } from './instrument.ts';
import { activeStates, checkEvent, checkStatus, untakenReason, type Refusal } from './refusal.ts';
import { awaitingSnapshot, completionRefusal, invokeIdOf, isCompletionEvent, thrownCompletionRefusal } from './unhandled.ts';
import { fireDueTimers, rearmTimers, scheduledDeadlines, trackTimers } from './timers.ts';

/** The answer of `session.send`: applied (with the state it settled in and the events it caused) or refused with a code. */
export type SendResult =
  | { applied: true; state: unknown; status: SessionStatus; events: readonly RuntimeEvent[] }
  | { applied: false; code: string; message: string; details?: unknown };

const runsBySystem = new WeakMap<object, SessionRun>();

/** The live run that owns the actor system an invoked actor belongs to. */
export function runOfSystem(system: object): SessionRun | undefined {
  return runsBySystem.get(system);
}

interface Base {
  snapshot: unknown;
  step: number;
  status: SessionStatus;
  approval?: ApprovalRecord;
}

/**
 * One session while it has work to do: its XState actor, the events not yet committed, and the commit chain.
 * Idle sessions have no run; they are a stored record the next `send` restores.
 */
export class SessionRun {
  readonly sessionId: string;
  readonly traceId: string;
  readonly journal: Map<string, JournalEntry>;
  readonly inflight = new Set<Promise<unknown>>();
  /** Events appended by this run, in order. */
  readonly appended: RuntimeEvent[] = [];
  status: SessionStatus;
  step: number;
  seq: number;
  usage: { promptTokens: number; completionTokens: number };
  approval?: ApprovalRecord;
  error?: FlowError;
  fatal?: FlowError;
  /** Fencing token of the session lease held for this run (stores with leases); every commit carries it. */
  fence?: number;
  private record: SessionRecord;
  private actor?: Actor<AnyStateMachine>;
  private actorStopped = false;
  private restoring = false;
  /** Journal key of the latest call of each invoke id. */
  private readonly callKeys = new Map<string, string>();
  /** Input of the latest call of each invoke id (to put a call back in flight when its result is refused). */
  private readonly callInputs = new Map<string, unknown>();
  /** The event the root actor processes now (XState reports a throw without it). */
  private currentEvent?: { type: string } & Record<string, unknown>;
  /** True while an event from outside is applied synchronously: a throw then refuses that event and changes nothing. */
  private applyingExternal = false;
  private frozenSnapshot?: unknown;
  private lastContext: unknown;
  private validContext: unknown;
  private lastStatus?: string;
  private approvalState?: string;
  private microsteps: Array<{ event: string; source: string; targets: string[] }> = [];
  private pendingEvents: RuntimeEvent[] = [];
  /** Set once the runtime's `inspect` option threw: it is not called again for this run. */
  private inspectorFailed = false;
  private pendingJournal: JournalEntry[] = [];
  private dirty = false;
  private commitQueued = false;
  private commitTail: Promise<void> = Promise.resolve();
  private quiet = false;
  private quietWaiters: Array<() => void> = [];
  private base: Base;
  private failure?: FlowError;

  private constructor(readonly host: RunHost, readonly info: MachineInfo, record: SessionRecord, journal: readonly JournalEntry[]) {
    this.record = record;
    this.sessionId = record.sessionId;
    this.traceId = record.traceId;
    this.status = record.status;
    this.step = record.step;
    this.seq = record.seq;
    this.usage = record.usage;
    this.approval = record.approval;
    this.error = record.error;
    this.journal = new Map(journal.map((entry) => [entry.key, entry]));
    this.base = { snapshot: record.snapshot, step: record.step, status: record.status, approval: record.approval };
  }

  /** Starts a new session: its first commit creates it in the store. */
  static create(host: RunHost, info: MachineInfo, ids: { sessionId: string; traceId: string }, input: unknown): SessionRun {
    const now = host.clock.now();
    const record: SessionRecord = {
      sessionId: ids.sessionId, machineId: info.definition.id, specHash: info.definition.specHash, traceId: ids.traceId,
      status: 'running', version: 0, seq: 0, step: 0, snapshot: undefined, usage: NO_USAGE,
      createdAt: now, updatedAt: now,
    };
    const run = new SessionRun(host, info, record, []);
    run.append('session.started', { machineId: info.definition.id, specHash: info.definition.specHash, input: input ?? null });
    run.startActor({ input });
    return run;
  }

  /**
   * Starts a session forked from another one's state (see planFork): `session.started` names the parent, a
   * `state.changed` (event `flowing.fork`) sets the state and context, then the actor starts there. The state's entry
   * actions do not run again; the calls it invokes start now and are this session's own (keys `<invoke>@1`), and its
   * `after` timers start now with their full delay.
   */
  static fork(host: RunHost, info: MachineInfo, ids: { sessionId: string; traceId: string }, from: { parentId: string; forkedAt: number; state: unknown; context: unknown; snapshot: unknown; timers: ReadonlyArray<{ type: string; delayMs: number }> }): SessionRun {
    const now = host.clock.now();
    const record: SessionRecord = {
      sessionId: ids.sessionId, machineId: info.definition.id, specHash: info.definition.specHash, traceId: ids.traceId,
      status: 'running', version: 0, seq: 0, step: 0, snapshot: undefined, usage: NO_USAGE, createdAt: now, updatedAt: now,
      fork: { parentId: from.parentId, forkedAt: from.forkedAt },
    };
    // The fork enters the state now: its timers start now, armed like a restored session's.
    if (from.timers.length > 0) record.timers = Object.fromEntries(from.timers.map((timer) => [timer.type, now + timer.delayMs]));
    const run = new SessionRun(host, info, record, []);
    run.append('session.started', { machineId: info.definition.id, specHash: info.definition.specHash, input: null, parentId: from.parentId, forkedAt: from.forkedAt });
    run.step = 1;
    run.append('state.changed', { state: sharedValue(info, from.state), event: 'flowing.fork', transitions: EMPTY_LIST, context: from.context });
    run.startActor({ snapshot: from.snapshot });
    const snapshot = run.snapshot;
    if (snapshot && !run.actorStopped) run.watchApprovals(snapshot);
    return run;
  }

  /** Restores a stored session; in-flight calls restart and find their journaled results. */
  static restore(host: RunHost, info: MachineInfo, record: SessionRecord, journal: readonly JournalEntry[], start = true): SessionRun {
    const run = new SessionRun(host, info, record, journal);
    if (start) run.startActor({ snapshot: record.snapshot });
    else run.quiet = true;
    return run;
  }

  private startActor(options: { input?: unknown; snapshot?: unknown }) {
    const forwardAll = this.host.inspect !== undefined;
    const actor = createActor(this.info.machine, {
      ...(options.snapshot === undefined ? { input: options.input } : { snapshot: options.snapshot as never }),
      ...(forwardAll ? { inspect: this.onInspect.bind(this) } : {}),
      clock: xstateClock(this.host.clock),
    });
    this.actor = actor;
    if (!forwardAll) this.hearRootOnly(actor);
    runsBySystem.set(actor.system, this);
    // Without an error observer XState rethrows the actor's errors globally; with it, they end the session here.
    actor.subscribe({ error: this.onActorError.bind(this) });
    this.restoring = options.snapshot !== undefined;
    try {
      actor.start();
    } finally {
      this.restoring = false;
    }
    // Restoring runs no entry actions, so `after` timers are scheduled again here with the time they had left.
    if (options.snapshot !== undefined && !this.actorStopped) rearmTimers(actor, this.record.timers, this.host.clock);
    if (options.snapshot !== undefined && !this.actorStopped) this.settle(actor.getSnapshot());
  }

  /** The key of a call an invoked actor starts now: stable when the same snapshot is restored later. */
  callKey(invokeId: string, input?: unknown): string {
    const key = (this.restoring ? this.record.calls?.[invokeId] : undefined) ?? `${invokeId}@${this.restoring ? this.step : this.step + 1}`;
    this.callKeys.set(invokeId, key);
    this.callInputs.set(invokeId, input);
    return key;
  }

  /** The keys of the calls in flight in a persisted snapshot (its invoked children), for the stored record. */
  private inflightCalls(snapshot: unknown): Record<string, string> | undefined {
    const children = (snapshot as { children?: Record<string, unknown> } | undefined)?.children;
    let calls: Record<string, string> | undefined;
    for (const id in children) {
      const key = this.callKeys.get(id);
      if (key !== undefined) (calls ??= {})[id] = key;
    }
    return calls;
  }

  get snapshot(): AnyMachineSnapshot | undefined {
    return this.actor?.getSnapshot() as AnyMachineSnapshot | undefined;
  }

  /**
   * Without the runtime's `inspect` option only the root actor's inspection events matter here. An XState inspector
   * makes XState copy every event of every actor in the system (`{ ...event, rootId }`, some 66 a session, most of
   * them the invoked calls' own) only for onInspect to drop all but the root's; so the system's inspection entry point
   * (`_sendInspectionEvent`, xstate 5.33.3, which every actor calls through `system`) is replaced by one that hands
   * the root's events over as they are. Events sent while the actor is constructed reach no one, as before: onInspect
   * ignores them until `this.actor` is set. Should XState ever drop that entry point, the public inspector is used.
   */
  private hearRootOnly(actor: Actor<AnyStateMachine>) {
    const system = actor.system as unknown as { _sendInspectionEvent?: (event: InspectionEvent) => void };
    if (typeof system._sendInspectionEvent !== 'function') {
      actor.system.inspect(this.onInspect.bind(this));
      return;
    }
    system._sendInspectionEvent = (event) => {
      if (event.actorRef === actor) this.onInspect(event);
    };
  }

  /** Called by XState for every inspection event of the session's actor system. */
  private onInspect(event: InspectionEvent) {
    if (this.host.inspect && !this.inspectorFailed) this.forwardInspection(this.host.inspect, event);
    if (event.actorRef !== this.actor || this.actorStopped) return;
    if (event.type === '@xstate.event') {
      this.currentEvent = event.event as { type: string } & Record<string, unknown>;
    } else if (event.type === '@xstate.microstep') {
      for (const t of event._transitions) {
        this.microsteps.push({ event: t.eventType, source: t.source.id, targets: t.target?.map((n) => n.id) ?? [] });
      }
    } else if (event.type === '@xstate.snapshot') {
      this.onSnapshot(event.snapshot as AnyMachineSnapshot, event.event);
    }
  }

  /**
   * Hands an inspection event to the runtime's `inspect` option. An inspector that throws never reaches the session:
   * it is reported once (a process warning, code FLOWING_INSPECTOR_THREW) and hears nothing more from this run.
   */
  private forwardInspection(inspector: XStateInspector, event: InspectionEvent) {
    try {
      inspector(event, { sessionId: this.sessionId, machineId: this.info.definition.id, afterSeq: this.seq });
    } catch (error) {
      this.inspectorFailed = true;
      process.emitWarning(`the inspect option threw on ${event.type} of session ${this.sessionId} and hears nothing more from it: ${(error as Error)?.message ?? String(error)}`, { code: 'FLOWING_INSPECTOR_THREW' });
    }
  }

  private onSnapshot(snapshot: AnyMachineSnapshot, causeEvent: { type: string }) {
    const cause = causeEvent.type;
    if (this.restoring) {
      this.lastContext = snapshot.context;
      this.lastStatus = snapshot.status;
      this.approvalState = this.approval && !this.approval.decision ? this.approval.state : undefined;
      return;
    }
    const transitions = this.microsteps;
    this.microsteps = [];
    if (transitions.length === 0 && snapshot.status === 'active' && isCompletionEvent(cause)) {
      this.refuseCompletion(snapshot, causeEvent as { type: string } & Record<string, unknown>);
      return;
    }
    if (transitions.length === 0 && snapshot.status === this.lastStatus && cause !== 'xstate.init') return; // nothing was taken
    this.lastStatus = snapshot.status;
    this.step++;
    if (this.step > this.host.limits.maxSteps) {
      this.fail({ code: 'STEP_LIMIT', message: `the session took more than ${this.host.limits.maxSteps} steps` }, false);
      return;
    }
    const data: Record<string, unknown> = { state: sharedValue(this.info, snapshot.value), event: cause, transitions: transitions.length === 0 ? EMPTY_LIST : transitions };
    // Events from outside are logged whole, so a session can be replayed from its log.
    if (!cause.startsWith('xstate.')) data.payload = causeEvent;
    if (snapshot.context !== this.lastContext) {
      this.lastContext = snapshot.context;
      data.context = snapshot.context;
    }
    this.append('state.changed', data);
    this.watchApprovals(snapshot);
    this.settle(snapshot);
  }

  private watchApprovals(snapshot: AnyMachineSnapshot) {
    let site: string | undefined;
    for (const node of snapshot._nodes) if (this.info.approvalSites.has(node.key)) site = node.key;
    if (site !== undefined && site !== this.approvalState) {
      this.approval = approvalRequest(this.info.approvalSites.get(site)!, snapshot.context, `${this.sessionId}:${site}@${this.step}`);
      const { id, state, tool, args, argsHash } = this.approval;
      this.append('approval.requested', { approvalId: id, state, tool, args, argsHash });
    }
    this.approvalState = site;
  }

  private settle(snapshot: AnyMachineSnapshot) {
    if (this.actor) trackTimers(this.actor, this.host.clock);
    if (snapshot.status === 'done') {
      this.status = 'done';
      this.append('session.done', { state: snapshot.value, output: snapshot.output ?? null });
    } else if (snapshot.status === 'error') {
      this.status = 'error';
      this.error = toFlowError(snapshot.error, 'TOOL_FAILED');
      this.append('error', { code: this.error.code, message: this.error.message, recoverable: false });
    } else if (snapshot.status === 'active') {
      // A state waiting for its `after` timer is waiting too: the runtime wakes the session up when it is due.
      this.status = hasActiveChild(snapshot) ? 'running' : 'waiting';
    }
    this.markDirty();
    if (this.status !== 'running') this.setQuiet();
  }

  /** Appends an event (seq assigned now, frozen) to be written by the next commit. */
  append(type: RuntimeEventType, data: Record<string, unknown>): RuntimeEvent {
    const event: RuntimeEvent = freezeEvent({ seq: ++this.seq, sessionId: this.sessionId, traceId: this.traceId, at: this.host.clock.now(), type, data });
    this.pendingEvents.push(event);
    this.appended.push(event);
    this.markDirty();
    return event;
  }

  /** Records a journal entry (started or completed) for the next commit. */
  journalWrite(entry: JournalEntry) {
    this.journal.set(entry.key, entry);
    this.pendingJournal.push(entry);
    this.markDirty();
  }

  addUsage(usage: { promptTokens: number; completionTokens: number }) {
    this.usage = { promptTokens: this.usage.promptTokens + usage.promptTokens, completionTokens: this.usage.completionTokens + usage.completionTokens };
    this.markDirty();
  }

  private commitScheduled = false;

  /**
   * Marks unwritten changes and schedules a commit for the end of this turn of the event loop, so the steps that
   * follow one another without I/O share one store write; `flush` writes at once where durability is needed.
   */
  private markDirty() {
    this.dirty = true;
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    setImmediate(() => {
      this.commitScheduled = false;
      void this.flush();
    });
  }

  /** Asks for a commit at the end of this turn of the event loop. */
  scheduleCommit() {
    this.markDirty();
  }

  /** Writes everything appended so far; resolves when it is in the store (and delivered to subscribers). */
  flush(): Promise<void> {
    if (!this.dirty || this.commitQueued) return this.commitTail;
    this.commitQueued = true;
    this.commitTail = this.commitTail.then(() => this.commitNow());
    return this.commitTail;
  }

  private async commitNow(): Promise<void> {
    this.commitQueued = false;
    if (!this.dirty || this.fatal) return;
    this.dirty = false;
    if (!this.frozenSnapshot && this.actor && !this.actorStopped) {
      // Checked where it is written: no snapshot whose context breaks the spec ever reaches the store. Side effects
      // cannot slip in between, because a non-idempotent call waits for this commit before it runs.
      const context = this.actor.getSnapshot().context;
      if (context !== this.validContext) {
        const check = this.info.contextSchema.safeParse(context);
        if (!check.success) {
          const issues = check.error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
          this.fail({ code: 'CONTEXT_INVALID', message: `step ${this.step} produced a context that does not match the spec: ${issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`, details: { issues } }, true);
          if (this.record.version === 0) return; // a session whose first state is invalid is never created
        } else {
          this.validContext = context;
        }
      }
    }
    const events = this.pendingEvents;
    const journal = this.pendingJournal;
    this.pendingEvents = [];
    this.pendingJournal = [];
    const snapshot = this.frozenSnapshot ?? (this.actor && !this.actorStopped ? this.persisted(this.actor) : this.record.snapshot);
    // A literal with a fixed shape (not a spread) keeps stored records compact in memory.
    const base = this.record;
    const record: SessionRecord = {
      sessionId: base.sessionId, machineId: base.machineId, specHash: base.specHash, traceId: base.traceId, status: this.status,
      version: base.version + 1, seq: this.seq, step: this.step, snapshot, usage: this.usage, createdAt: base.createdAt,
      updatedAt: this.host.clock.now(),
    };
    if (base.fork) record.fork = base.fork;
    if (this.approval) record.approval = this.approval;
    if (this.error) record.error = this.error;
    const calls = this.inflightCalls(snapshot);
    if (calls) record.calls = calls;
    const timers = this.frozenSnapshot || !this.actor || this.actorStopped ? undefined : scheduledDeadlines(this.actor, this.host.clock);
    if (timers) record.timers = timers;
    try {
      await this.host.store.commit({ expectedVersion: this.record.version, record, events, journal, ...(this.fence === undefined ? {} : { fence: this.fence }) });
    } catch (error) {
      this.fatal = toFlowError(error, 'STORE_CONFLICT');
      this.stopActor();
      this.setQuiet();
      return;
    }
    this.record = record;
    this.host.onCommitted?.(record);
    this.host.deliver(this.sessionId, events);
  }

  private persistedOf?: unknown;
  private persistedValue?: unknown;

  /** The actor's persisted snapshot, recomputed only when its snapshot changed since the last commit. */
  private persisted(actor: Actor<AnyStateMachine>): unknown {
    const current = actor.getSnapshot();
    if (current !== this.persistedOf) {
      this.persistedOf = current;
      this.persistedValue = compactSnapshot(actor.getPersistedSnapshot() as Record<string, unknown>, this.info);
    }
    return this.persistedValue;
  }

  /** Makes a quiet run ready to be reused for the session's next event (kept warm by the runtime). */
  park() {
    this.appended.length = 0;
    this.quietWaiters = [];
  }

  /** True when the stored record has `after` deadlines pending (the runtime's wake-up, not a live actor, keeps them). */
  get hasTimers(): boolean {
    return this.record.timers !== undefined;
  }

  /** Delivers the delayed transitions that are due now (a wake-up); resolves when the session is quiet again. */
  fireTimers(): Promise<void> {
    if (!this.actor || this.actorStopped) return Promise.resolve();
    this.quiet = false;
    fireDueTimers(this.actor, this.record.timers, this.host.clock);
    if (!this.quiet && this.status !== 'running') this.setQuiet();
    return this.whenQuiet();
  }

  /** The store version this run last wrote or read. */
  get version(): number {
    return this.record.version;
  }

  /** Resolves when the session waits for input, finished, failed or was cancelled. */
  whenQuiet(): Promise<void> {
    if (this.quiet) return Promise.resolve();
    return new Promise((resolve) => this.quietWaiters.push(resolve));
  }

  private setQuiet() {
    this.quiet = true;
    const waiters = this.quietWaiters;
    this.quietWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Applies one event after checking it; waits until the session is quiet again. */
  async send(raw: unknown): Promise<SendResult> {
    const statusRefusal = checkStatus(this.status, this.error);
    if (statusRefusal) return this.refuse(raw, statusRefusal);
    const snapshot = this.snapshot;
    if (!snapshot || this.actorStopped) return this.refuse(raw, { code: 'SESSION_FINISHED', message: 'the session has no running machine' });
    const check = checkEvent(this.info, raw);
    if (!check.ok) return this.refuse(raw, check.refusal);
    const first = this.appended.length;
    const stepBefore = this.step;
    this.base = { snapshot: this.record.snapshot, step: this.step, status: this.status, approval: this.approval };
    this.failure = undefined;
    this.quiet = false;
    this.applyingExternal = true;
    try {
      this.actor!.send(check.event);
    } finally {
      this.applyingExternal = false;
    }
    if (this.step === stepBefore && !this.failure && !this.actorStopped) {
      // No transition was taken (XState would have dropped the event silently); nothing changed, so refuse it.
      this.quiet = true;
      return this.refuse(raw, untakenReason(snapshot, check.event.type), check.event);
    }
    // Decided after the transition, before any invoked call leaves XState's stack (calls start after a microtask).
    const decided = decideApproval(this.approval, check.event, snapshot);
    if (decided) {
      this.approval = decided;
      this.append('approval.decided', { approvalId: decided.id, decision: decided.decision, tool: decided.tool, argsHash: decided.argsHash, reason: check.event.reason ?? null });
    }
    if (!this.quiet && this.status !== 'running') this.setQuiet();
    await this.whenQuiet();
    await this.flush();
    const failure = this.fatal ?? this.failure;
    if (failure) {
      this.append('transition.rejected', { event: check.event.type, states: activeStates(snapshot), code: failure.code, reason: failure.message });
      await this.flush();
      return { applied: false, ...failure };
    }
    return { applied: true, state: this.snapshot?.value ?? null, status: this.status, events: this.appended.slice(first) };
  }

  /** Records a refusal in the log and returns it. */
  async refuse(raw: unknown, refusal: Refusal, payload?: unknown): Promise<SendResult> {
    const type = raw !== null && typeof raw === 'object' && typeof (raw as { type?: unknown }).type === 'string' ? (raw as { type: string }).type : null;
    const snapshot = this.snapshot;
    this.append('transition.rejected', {
      event: type === null ? null : type.slice(0, 200), states: snapshot && !this.actorStopped ? activeStates(snapshot) : [],
      code: refusal.code, reason: refusal.message, ...(refusal.details === undefined ? {} : { details: refusal.details }),
      ...(payload === undefined ? {} : { payload }),
    });
    await this.flush();
    return { applied: false, code: refusal.code, message: refusal.message, ...(refusal.details === undefined ? {} : { details: refusal.details }) };
  }

  /**
   * Ends the current work with an error. `revert` (context checks) restores what the store held before the event,
   * so no invalid snapshot is ever written; otherwise the session ends in the `error` status.
   */
  fail(error: FlowError, revert: boolean) {
    this.append('error', { code: error.code, message: error.message, recoverable: revert, ...(error.details === undefined ? {} : { details: error.details }) });
    if (revert) {
      this.failure = error;
      this.frozenSnapshot = this.base.snapshot;
      this.step = this.base.step;
      this.status = this.base.status === 'running' ? 'error' : this.base.status;
      this.approval = this.base.approval;
    } else {
      this.frozenSnapshot = this.terminalSnapshot(error);
      this.status = 'error';
      this.error = error;
    }
    this.stopActor();
    this.setQuiet();
  }

  /**
   * The actor threw or failed. An invoked call's error that no onError branch takes is refused like an unhandled
   * result; a throw while an event from outside is applied refuses that event and keeps the state before it; any
   * other throw ends the session with a coded error.
   */
  private onActorError(thrown: unknown) {
    if (this.actorStopped) return;
    const cause = this.currentEvent;
    if (cause && cause.type.startsWith('xstate.error.actor.') && cause.error === thrown && this.actor) {
      this.refuseCompletion(this.actor.getSnapshot() as AnyMachineSnapshot, cause);
      return;
    }
    if (cause && !this.applyingExternal && invokeIdOf(cause.type) !== undefined && this.actor) {
      // A guard or action threw on a call's result: the result is kept and the session waits for a person, who can
      // deliver it again once the code is fixed (or another result, or a failure) instead of losing the session.
      this.refuseCompletion(this.actor.getSnapshot() as AnyMachineSnapshot, cause, thrownError(thrown));
      return;
    }
    this.fail(thrownError(thrown), this.applyingExternal);
  }

  /**
   * A call's result or error, or a timer, that no branch takes: XState would drop it and leave the state waiting for
   * ever. Refused (logged as `transition.rejected`) and the session stops in `needs_attention` with the call back in
   * flight, so a person can resolve it; later events are refused with SESSION_NEEDS_ATTENTION.
   */
  private refuseCompletion(snapshot: AnyMachineSnapshot, event: { type: string } & Record<string, unknown>, thrown?: FlowError) {
    const invokeId = invokeIdOf(event.type);
    const callId = invokeId === undefined ? undefined : this.callKeys.get(invokeId);
    const refusal = thrown ? thrownCompletionRefusal(snapshot, event, callId, thrown) : completionRefusal(snapshot, event, callId);
    this.append('transition.rejected', { event: event.type, states: activeStates(snapshot), code: refusal.code, reason: refusal.message, details: refusal.details });
    this.append('error', { code: refusal.code, message: refusal.message, recoverable: true });
    const persisted = this.actor!.getPersistedSnapshot() as Record<string, unknown>;
    this.frozenSnapshot = awaitingSnapshot(persisted, invokeId, invokeId === undefined ? undefined : this.callInputs.get(invokeId));
    this.status = 'needs_attention';
    this.error = { code: refusal.code, message: refusal.message };
    this.stopActor();
    this.setQuiet();
  }

  /**
   * This process lost the session's lease: stop as if it had crashed. Nothing more is written (in-flight calls are
   * aborted and their results dropped); the process that takes the session over resumes it from the store.
   */
  abandon(error: FlowError) {
    if (this.fatal) return;
    this.fatal = error;
    this.stopActor();
    this.setQuiet();
  }

  /** A non-idempotent call has no recorded result: stop and wait for a person. */
  needsAttention(entry: JournalEntry) {
    if (this.actorStopped) return;
    this.append('tool.unknown_outcome', { callId: entry.key, tool: entry.name, startedAt: entry.startedAt });
    this.frozenSnapshot = this.actor?.getPersistedSnapshot();
    this.status = 'needs_attention';
    this.error = { code: 'TOOL_UNKNOWN_OUTCOME', message: `call ${entry.key} of '${entry.name}' started but its result was never recorded; it is not idempotent, so it is not run again` };
    this.stopActor();
    this.setQuiet();
  }

  /** Aborts in-flight calls, stops the actor and marks the session cancelled. */
  async cancel(reason: string): Promise<void> {
    if (this.status === 'cancelled' || this.status === 'done' || this.status === 'error') return;
    if (this.actor && !this.actorStopped) this.frozenSnapshot = this.actor.getPersistedSnapshot();
    this.status = 'cancelled';
    this.append('session.cancelled', { reason, state: this.snapshot?.value ?? null });
    this.stopActor();
    await Promise.allSettled([...this.inflight]);
    this.setQuiet();
    await this.flush();
  }

  /** Tracks a call so cancel can wait for it to wind down. */
  track<T>(promise: Promise<T>): Promise<T> {
    this.inflight.add(promise);
    promise.then(() => this.inflight.delete(promise), () => this.inflight.delete(promise));
    return promise;
  }

  get stopped(): boolean {
    return this.actorStopped;
  }

  private stopActor() {
    if (this.actorStopped) return;
    this.actorStopped = true;
    const actor = this.actor;
    // Stopping from inside XState's own processing (an inspection callback) is deferred to keep its state consistent.
    // The entry is deleted, not left to the GC: a WeakMap's table only shrinks on delete, so dead systems would
    // keep it as large as the most runs ever started between two full collections.
    if (actor) queueMicrotask(() => {
      actor.stop();
      runsBySystem.delete(actor.system);
    });
  }

  /** The snapshot kept for a session that ended in error: an errored actor's thrown value is replaced by its code. */
  private terminalSnapshot(error: FlowError): unknown {
    const actor = this.actor;
    if (!actor) return this.record.snapshot;
    const persisted = actor.getPersistedSnapshot() as Record<string, unknown>;
    return persisted.status === 'error' ? { ...persisted, error } : persisted;
  }

  /** The error that reverted the last event (context check), if any. */
  get failed(): FlowError | undefined {
    return this.failure ?? this.fatal;
  }

  /** Drops the actor once the run is quiet and committed. */
  dispose() {
    this.stopActor();
  }
}

/** An invoked call still running (a finished one stays among the children until its state is left). */
function hasActiveChild(snapshot: AnyMachineSnapshot): boolean {
  const children = snapshot.children as Record<string, { getSnapshot(): { status: string } } | undefined>;
  for (const id in children) if (children[id]?.getSnapshot().status === 'active') return true;
  return false;
}
