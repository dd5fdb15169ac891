import type { AnyMachineSnapshot } from 'xstate';
import { childSessionId } from '../calls/machine-call.ts';
import type { FlowError } from '../errors.ts';
import type { RuntimeEvent, RuntimeEventType } from '../events.ts';
import type { ApprovalRecord, JournalEntry, SessionRecord, SessionStatus } from '../store/types.ts';
import { ActorBridge, type ProcessedEvent } from './actor-bridge.ts';
import type { TakenTransition } from '../xstate-adapter.ts';
import { ApprovalWatch } from './approval-watch.ts';
import { CallLedger } from './call-ledger.ts';
import { compactSnapshot } from './compact.ts';
import { ContextCheck } from './context-check.ts';
import { invokesMachines } from './decided-child.ts';
import { EventIds, sendOnce, type IdempotentRun } from './event-ids.ts';
import type { RunHost } from './host.ts';
import type { MachineInfo } from './machine-info.ts';
import type { RunOutcome } from './outcome.ts';
import { Quiet } from './quiet.ts';
import { checkStatus, type Refusal } from './refusal.ts';
import { RunFailures } from './run-failures.ts';
import { RunSteps } from './run-steps.ts';
import { RunLog, type RecordDraft } from './run-log.ts';
import { refuseEvent, sendEvent } from './run-send.ts';
import type { CancelResult, SendResult } from './types.ts';

export type { SendResult } from './types.ts';

/** What the store held before the event being applied, to go back to when it is reverted. */
export interface RunBase {
  snapshot: unknown;
  step: number;
  status: SessionStatus;
  approval?: ApprovalRecord;
}

/**
 * One session while it has work to do. It coordinates its collaborators — the actor bridge (the XState actor), the
 * run log (events, journal, commits), the call ledger (calls in flight and their contexts), the approval watch and
 * the failure rules — and keeps what they share: the status, the step counter and the outcome.
 * Idle sessions have no run; they are a stored record the next `send` restores.
 */
export class SessionRun implements IdempotentRun {
  readonly sessionId: string;
  readonly log: RunLog;
  readonly calls: CallLedger;
  readonly actor: ActorBridge;
  readonly approvals: ApprovalWatch;
  /** The event ids the session remembers (see sendOnce). */
  readonly eventIds: EventIds;
  status: SessionStatus;
  step: number;
  turnSteps = 0;
  externalTurn = false;
  outcome?: RunOutcome;
  /** A snapshot to store instead of the actor's (the state before a reverted event, or a stopped session's). */
  frozenSnapshot?: unknown;
  /** What the store held before the event being applied. */
  before: RunBase;
  readonly quiet: Quiet;
  private readonly failures: RunFailures;
  private readonly contextCheck: ContextCheck;
  private readonly steps: RunSteps;
  /** True while an event from outside is applied synchronously: a throw then refuses that event and changes nothing. */
  private applyingExternal = false;

  constructor(
    readonly host: RunHost,
    readonly info: MachineInfo,
    record: SessionRecord,
    journal: readonly JournalEntry[],
    quiet = false,
  ) {
    this.sessionId = record.sessionId;
    this.status = record.status;
    this.step = record.step;
    if (record.error) this.outcome = { kind: 'ended', error: record.error };
    this.before = { snapshot: record.snapshot, step: record.step, status: record.status, approval: record.approval };
    this.quiet = new Quiet(quiet);
    this.contextCheck = new ContextCheck(info.contextSchema);
    this.approvals = new ApprovalWatch(info, record.sessionId, record.approval);
    this.eventIds = new EventIds(record.eventIds);
    this.failures = new RunFailures(this);
    this.steps = new RunSteps(this, this.failures);
    // The run is its collaborators' owner and listener itself: no closures are made per run.
    this.log = new RunLog(host.store, host.clock, this, record, journal, host.limits.maxLogBytes);
    this.calls = new CallLedger(host, this, this.log);
    const inspect = host.inspect && {
      inspector: host.inspect,
      source: () => ({ sessionId: this.sessionId, machineId: info.definition.id, afterSeq: this.log.seq }),
    };
    this.actor = new ActorBridge(
      {
        machine: info.machine,
        throws: host.throwsOf(info),
        clock: host.clock,
        xstateClock: host.xstateClock,
        directory: host.directory,
        calls: this.calls,
        ...(inspect ? { inspect } : {}),
      },
      this,
    );
  }

  /** RunLog: the commit is in the store. */
  committed(stored: SessionRecord, events: readonly RuntimeEvent[]): void {
    this.host.onCommitted?.(stored);
    this.host.deliver(this.sessionId, events);
    // Messages leave only once the step that sent them is stored: a crash before never delivers a message the log lacks.
    if (this.host.sendMessages && events.some((e) => e.type === 'channel.sent')) {
      this.host.sendMessages(
        this.sessionId,
        events.filter((e) => e.type === 'channel.sent'),
      );
    }
  }

  /** ActorBridge: the machine emitted a channel message; it is logged now and routed once stored (see committed). */
  onEmit(message: { channel?: unknown; key?: unknown; data?: unknown }): void {
    const { channel, key, data } = message;
    if (typeof channel !== 'string' || typeof key !== 'string' || !data || typeof data !== 'object') return;
    const target = this.host.channelTarget?.(channel, key);
    const messageId = `${this.sessionId}-m${this.log.seq + 1}`;
    if (!target) {
      this.append('channel.failed', {
        messageId,
        channel,
        key,
        code: 'CHANNEL_UNROUTED',
        reason: `no machine listens to channel '${channel}'`,
      });
      return;
    }
    const to = target.sessionId === undefined ? {} : { to: target.sessionId, machine: target.machine };
    this.append('channel.sent', { messageId, channel, key, ...to, data });
  }

  /**
   * True when the log has `channel.received` for a message (looked for from the first event its id's application
   * logged): a message answered as a duplicate whose note was lost to a crash is noted then.
   */
  async noted(messageId: string): Promise<boolean> {
    const since = this.eventIds.find(messageId)?.seq ?? 1;
    const events = await this.host.store.readEvents(this.sessionId, since - 1);
    return events.some((e) => e.type === 'channel.received' && (e.data as { messageId?: unknown }).messageId === messageId);
  }

  /** The session applied a channel message: logged with the sender, after the event it arrived as. */
  logReceived(via: { channel: string; from: string; messageId: string }): void {
    this.append('channel.received', { messageId: via.messageId, channel: via.channel, from: via.from });
  }

  /** logReceived, stored now. */
  async noteReceived(via: { channel: string; from: string; messageId: string }): Promise<void> {
    this.logReceived(via);
    await this.flush();
  }

  /** RunLog: the store refused a commit; its refusal is the outcome, even when a lost lease was noticed a moment before. */
  lost(error: FlowError): void {
    this.abandon(error);
    this.outcome = { kind: 'lost', error };
  }

  /** RunLog: what this commit logs does not fit in the session's log quota and was dropped. */
  full(error: FlowError): void {
    // Quiet outside a turn, the run was only logging a refusal: that record is dropped and nothing else changes.
    if (!this.externalTurn && this.quiet.is) return;
    this.failures.logFull(error, this.externalTurn);
  }

  /** CallLedger: the machine's tools. */
  get tools() {
    return this.info.definition.tools;
  }

  /** CallLedger: the session's approval now. */
  approval(): ApprovalRecord | undefined {
    return this.approvals.current;
  }

  consumeApproval(): void {
    this.approvals.consume();
  }

  /** CallLedger: the agent call waiting for a proposal ended undecided; a later APPROVE has nothing to run. */
  withdrawApproval(callId: string): void {
    const current = this.approvals.current;
    if (current?.callId !== callId || current.decision) return;
    const reason = `withdrawn: the agent call in state '${current.state}' ended before a decision`;
    this.approvals.current = { ...current, decision: 'rejected', reason };
    this.append('approval.decided', {
      approvalId: current.id,
      decision: 'rejected',
      tool: current.tool,
      argsHash: current.argsHash,
      callId,
      reason,
    });
  }

  /** CallLedger: an agent's model proposed a call a person must approve. */
  requestApproval(approval: ApprovalRecord): void {
    this.approvals.current = approval;
    this.append('approval.requested', {
      approvalId: approval.id,
      state: approval.state,
      tool: approval.tool,
      args: approval.args,
      argsHash: approval.argsHash,
      ...(approval.callId ? { callId: approval.callId } : {}),
    });
  }

  needsAttention(entry: JournalEntry): void {
    this.failures.unknownOutcome(entry);
  }

  /** CallLedger: how deep this session is in a tree of child sessions. */
  get depth(): number {
    return this.log.stored.parent?.depth ?? 0;
  }

  /** CallLedger: a call paused; with no other call running the session waits (quiet) until it is woken. */
  callPaused(): void {
    if (!this.actor.live || this.status !== 'running' || this.actor.callRunning) return;
    this.status = 'waiting';
    this.log.scheduleCommit();
    this.quiet.set();
  }

  get runStopped(): boolean {
    return this.actor.stopped;
  }

  /** Wakes the paused calls (a child they wait for moved on); the session runs until it is quiet again. */
  wakeCalls(): void {
    if (!this.actor.live || !this.calls.wake()) return;
    this.status = 'running';
    this.quiet.busy();
  }

  /**
   * The child session an APPROVE or REJECT goes to instead of this session: the one a paused machine call waits on,
   * when this session has no approval of its own pending.
   */
  forwardTarget(event: unknown): string | undefined {
    const type = (event as { type?: unknown } | null | undefined)?.type;
    if ((type !== 'APPROVE' && type !== 'REJECT') || this.status !== 'waiting' || !this.actor.live) return undefined;
    const own = this.approvals.current;
    if (own && !own.decision) return undefined;
    for (const invokeId of this.calls.pausedInvokes()) {
      const key = this.calls.keyOf(invokeId);
      if (key !== undefined) return childSessionId(this.sessionId, key);
    }
    return undefined;
  }

  /** Whether the session takes `event` itself now (a state of it handles it); false once it has ended. */
  accepts(event: { type: string }): boolean {
    const own = this.approvals.current;
    if (own && !own.decision) return true; // an approval of its own waits: the event is for it
    const snapshot = this.actor.live ? this.actor.snapshot : undefined;
    if (!snapshot || snapshot.status !== 'active') return false;
    try {
      return snapshot.can(event);
    } catch {
      return true; // a guard that throws is the send's to report
    }
  }

  /** Whether this session's machine invokes other machines. */
  get invokesMachines(): boolean {
    return invokesMachines(this.info);
  }

  /** The child sessions of the machine calls in flight (live, or in the stored record when there is no actor). */
  childSessions(): string[] {
    const calls = this.actor.live ? this.calls.inflightCalls(this.actor.persistedRaw()) : this.log.stored.calls;
    const ids: string[] = [];
    for (const invokeId in calls) {
      const invoke = this.info.invokes.get(invokeId);
      if (invoke && 'machine' in invoke) ids.push(childSessionId(this.sessionId, calls[invokeId]!));
    }
    return ids;
  }

  /** ActorBridge: a macrostep ended. */
  onStep(snapshot: AnyMachineSnapshot, cause: ProcessedEvent, transitions: TakenTransition[]): void {
    this.steps.step(snapshot, cause, transitions);
  }

  onRestored(snapshot: AnyMachineSnapshot): void {
    this.steps.restored(snapshot);
  }

  onActorError(thrown: unknown, cause: ProcessedEvent | undefined): void {
    this.failures.actorError(thrown, cause, this.applyingExternal);
  }

  get traceId(): string {
    return this.log.stored.traceId;
  }

  /** The store version this run last wrote or read. */
  get version(): number {
    return this.log.version;
  }

  get snapshot(): AnyMachineSnapshot | undefined {
    return this.actor.snapshot;
  }

  get stopped(): boolean {
    return this.actor.stopped;
  }

  /** True when the stored record has `after` deadlines pending (the runtime's wake-up, not a live actor, keeps them). */
  get hasTimers(): boolean {
    return this.log.stored.timers !== undefined;
  }

  /** The error that reverted the last event or stopped this process writing, if any. */
  get failed(): FlowError | undefined {
    return this.outcome && this.outcome.kind !== 'ended' ? this.outcome.error : undefined;
  }

  /** Starts the actor: a new session with its input, or a stored one from its snapshot (calls in flight restart). */
  start(from: { input: unknown } | { snapshot: unknown }): void {
    if ('input' in from) {
      this.actor.start({ input: from.input });
      return;
    }
    const { timers } = this.log.stored;
    this.actor.start({ snapshot: from.snapshot, ...(timers ? { timers } : {}) });
    const snapshot = this.actor.snapshot;
    if (snapshot && !this.actor.stopped) this.steps.settle(snapshot);
  }

  append(type: RuntimeEventType, data: Record<string, unknown>): RuntimeEvent {
    return this.log.append(type, data);
  }

  /** Writes everything appended so far; resolves when it is in the store. */
  flush(): Promise<void> {
    return this.log.flush();
  }

  whenQuiet(): Promise<void> {
    return this.quiet.whenQuiet();
  }

  /** The work of the run is over for now (waiting, finished, failed or cancelled). */
  setQuiet(): void {
    this.quiet.set();
  }

  /** The key of a call an invoked actor starts now: stable when the same snapshot is restored later. */
  keyFor(invokeId: string): string {
    const restoring = this.actor.restoring;
    return (restoring ? this.log.stored.calls?.[invokeId] : undefined) ?? `${invokeId}@${restoring ? this.step : this.step + 1}`;
  }

  /** Logs the approval asked for when the session just entered an approval state (a fork starts in one). */
  watchApprovals(snapshot: AnyMachineSnapshot): void {
    this.steps.watchApprovals(snapshot);
  }

  /** The record to write now; a context that breaks the spec reverts the step instead (see ContextCheck). */
  draft(): RecordDraft | undefined {
    if (!this.frozenSnapshot && this.actor.live) {
      const invalid = this.contextCheck.check(this.actor.snapshot!.context, this.step);
      if (invalid) {
        this.failures.revert(invalid);
        if (this.log.version === 0) return undefined; // a session whose first state is invalid is never created
      }
    }
    const snapshot =
      this.frozenSnapshot ?? (this.actor.live ? this.actor.persisted((p) => compactSnapshot(p, this.info)) : this.log.stored.snapshot);
    const draft: RecordDraft = { status: this.status, step: this.step, snapshot };
    if (this.approvals.current) draft.approval = this.approvals.current;
    if (this.outcome?.kind === 'ended') draft.error = this.outcome.error;
    const calls = this.calls.inflightCalls(snapshot);
    if (calls) draft.calls = calls;
    const timers = this.frozenSnapshot ? undefined : this.actor.timerDeadlines();
    if (timers) draft.timers = timers;
    const eventIds = this.eventIds.list;
    if (eventIds) draft.eventIds = eventIds;
    return draft;
  }

  /** Applies one event after checking it; waits until the session is quiet again. */
  send(raw: unknown): Promise<SendResult> {
    return sendEvent(this, raw);
  }

  /** Applies one event sent under an id, unless that id was sent before (see sendOnce). */
  sendOnce(raw: unknown, eventId: string, onApplied?: () => void): Promise<SendResult> {
    return sendOnce(this, raw, eventId, onApplied);
  }

  /** IdempotentRun: the state the session is in now. */
  get stateValue(): unknown {
    return this.snapshot?.value ?? (this.log.stored.snapshot as { value?: unknown } | undefined)?.value ?? null;
  }

  /** IdempotentRun: seq of the last event logged. */
  get seq(): number {
    return this.log.seq;
  }

  /** IdempotentRun: writes the record with the event ids as they are now. */
  commitIds(): Promise<void> {
    this.log.scheduleCommit();
    return this.log.flush();
  }

  readEvents(afterSeq: number, limit: number): Promise<readonly RuntimeEvent[]> {
    return this.host.store.readEvents(this.sessionId, afterSeq, limit);
  }

  /** Records a refusal in the log and returns it. */
  refuse(raw: unknown, refusal: Refusal, payload?: unknown): Promise<SendResult> {
    return refuseEvent(this, raw, refusal, payload);
  }

  /** Sends an event from outside to the actor: a throw while it is applied refuses it and changes nothing. */
  applyExternal(event: { type: string }): void {
    this.applyingExternal = true;
    try {
      this.actor.send(event);
    } finally {
      this.applyingExternal = false;
    }
  }

  /** Delivers the delayed transitions that are due now (a wake-up); resolves when the session is quiet again. */
  fireTimers(): Promise<void> {
    if (!this.actor.live) return Promise.resolve();
    this.turnSteps = 0;
    this.externalTurn = false;
    this.quiet.busy();
    this.actor.fireDueTimers(this.log.stored.timers);
    if (!this.quiet.is && this.status !== 'running') this.quiet.set();
    return this.quiet.whenQuiet();
  }

  /**
   * This process lost the session's lease or its commit: stop as if it had crashed. Nothing more is written
   * (in-flight calls are aborted and their results dropped); the process that takes the session over resumes it.
   */
  abandon(error: FlowError): void {
    if (this.outcome?.kind === 'lost') return;
    this.outcome = { kind: 'lost', error };
    this.log.halt();
    this.actor.stop();
    this.quiet.set();
  }

  /** Aborts in-flight calls, stops the actor and marks the session cancelled; a finished session is left as it is. */
  async cancel(reason: string): Promise<CancelResult> {
    if (this.status === 'cancelled' || this.status === 'done' || this.status === 'error') {
      const refusal = checkStatus(this.status, this.outcome?.error)!;
      return { cancelled: false, code: refusal.code, message: refusal.message };
    }
    const children = this.childSessions();
    if (this.actor.live) this.frozenSnapshot = this.actor.persistedRaw();
    this.status = 'cancelled';
    this.append('session.cancelled', { reason, state: this.snapshot?.value ?? null });
    this.actor.stop();
    // Cancel goes down the tree: a child session has no use once its parent is cancelled.
    await Promise.all(children.map((id) => this.host.children.cancel(id, `its parent ${this.sessionId} was cancelled: ${reason}`)));
    await this.calls.settled();
    this.quiet.set();
    await this.flush();
    return { cancelled: true };
  }

  /** Makes a quiet run ready to be reused for the session's next event (kept warm by the runtime). */
  park(): void {
    this.log.park();
    this.quiet.reset();
  }

  /** Drops the actor once the run is quiet and committed. */
  dispose(): void {
    this.actor.stop();
  }
}
