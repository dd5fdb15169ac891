import type { Clock } from '../clock.ts';
import { toFlowError, type FlowError } from '../errors.ts';
import { freezeEvent, type RuntimeEvent, type RuntimeEventType } from '../events.ts';
import type { LlmUsage } from '../llm/types.ts';
import type { JournalEntry, SessionRecord, SessionStore } from '../store/types.ts';

/** The part of the next record the session decides (the log adds ids, counters, usage and times). */
export type RecordDraft = Pick<SessionRecord, 'status' | 'step' | 'snapshot' | 'approval' | 'error' | 'calls' | 'timers' | 'eventIds'>;

/** What the log asks of its session when it writes, and tells it after. */
export interface RunLogOwner {
  /** The state to write now, or undefined to write nothing (the session is never created). */
  draft(): RecordDraft | undefined;
  /** The commit is in the store. */
  committed(record: SessionRecord, events: readonly RuntimeEvent[]): void;
  /** The store refused the commit (a conflict, a lost lease, the store is gone): nothing more may be written. */
  lost(error: FlowError): void;
  /**
   * The events and journal entries of a commit do not fit in the log's quota and were dropped: the owner undoes or
   * ends its work without appending anything; the record it drafts next is written alone.
   */
  full(error: FlowError): void;
}

/**
 * A session's log while it runs: events (with their seq) and journal entries not yet written, the usage, and the
 * commit chain. Steps that follow one another without I/O share one commit at the end of the turn of the event
 * loop (`scheduleCommit`); `flush` writes at once where durability is needed.
 */
export class RunLog {
  seq: number;
  usage: LlmUsage;
  readonly journal: Map<string, JournalEntry>;
  /** Events appended by this run since it was last parked, in order. */
  readonly appended: RuntimeEvent[] = [];
  /** Fencing token of the session lease held for this run (stores with leases); every commit carries it. */
  fence?: number;
  /** Bytes (UTF-8 JSON) of the events and journal writes stored for the session so far. */
  logBytes: number;
  private record: SessionRecord;
  private pendingEvents: RuntimeEvent[] = [];
  private pendingJournal: JournalEntry[] = [];
  private dirty = false;
  private scheduled = false;
  private queued = false;
  private halted = false;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: SessionStore,
    private readonly clock: Clock,
    private readonly owner: RunLogOwner,
    record: SessionRecord,
    journal: readonly JournalEntry[],
    private readonly maxLogBytes = Number.POSITIVE_INFINITY,
  ) {
    this.record = record;
    this.seq = record.seq;
    this.logBytes = record.logBytes ?? 0;
    this.usage = record.usage;
    this.journal = new Map(journal.map((entry) => [entry.key, entry]));
  }

  /** The record as last written or read. */
  get stored(): SessionRecord {
    return this.record;
  }

  /** The store version this run last wrote or read. */
  get version(): number {
    return this.record.version;
  }

  /** Appends an event (seq assigned now, frozen) to be written by the next commit. */
  append(type: RuntimeEventType, data: Record<string, unknown>): RuntimeEvent {
    const event: RuntimeEvent = freezeEvent({
      seq: ++this.seq,
      sessionId: this.record.sessionId,
      traceId: this.record.traceId,
      at: this.clock.now(),
      type,
      data,
    });
    this.pendingEvents.push(event);
    this.appended.push(event);
    this.markDirty();
    return event;
  }

  /** Records a journal entry (started or completed) for the next commit. */
  journalWrite(entry: JournalEntry): void {
    this.journal.set(entry.key, entry);
    this.pendingJournal.push(entry);
    this.markDirty();
  }

  addUsage(usage: LlmUsage): void {
    this.usage = {
      promptTokens: this.usage.promptTokens + usage.promptTokens,
      completionTokens: this.usage.completionTokens + usage.completionTokens,
    };
    this.markDirty();
  }

  /** Asks for a commit at the end of this turn of the event loop. */
  scheduleCommit(): void {
    this.markDirty();
  }

  /** Writes everything appended so far; resolves when it is in the store (and delivered to subscribers). */
  flush(): Promise<void> {
    if (!this.dirty || this.queued) return this.tail;
    this.queued = true;
    this.tail = this.tail.then(() => this.commitNow());
    return this.tail;
  }

  /** SESSION_LOG_FULL when the log has no room left for anything, else undefined. */
  fullRefusal(): FlowError | undefined {
    return this.logBytes >= this.maxLogBytes ? this.logFull(0) : undefined;
  }

  private logFull(needed: number): FlowError {
    const { sessionId } = this.record;
    return {
      code: 'SESSION_LOG_FULL',
      message: `the log of session '${sessionId}' holds ${this.logBytes} bytes and its quota is ${this.maxLogBytes} bytes (limits.maxLogBytes)${needed > 0 ? `; this event needs ${needed} more` : ''}: the event is refused and nothing of it is written`,
      details: { sessionId, logBytes: this.logBytes, maxLogBytes: this.maxLogBytes, ...(needed > 0 ? { needed } : {}) },
    };
  }

  /** Nothing more is written by this run (another process owns the session now). */
  halt(): void {
    this.halted = true;
  }

  /**
   * Forgets the events of the last piece of work and the finished calls (a quiet run kept for the session's next
   * event): later calls have keys of later steps, and a run restored from the store would not hold them either. A
   * warm run of a long session would otherwise keep every call it ever made.
   */
  park(): void {
    this.appended.length = 0;
    for (const [key, entry] of this.journal) if (entry.completed) this.journal.delete(key);
  }

  private markDirty() {
    this.dirty = true;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async commitNow(): Promise<void> {
    this.queued = false;
    if (!this.dirty || this.halted) return;
    this.dirty = false;
    // Drafted first: a draft that reverts the step appends the events saying so, and they belong to this commit.
    let draft = this.owner.draft();
    if (!draft) return;
    let events = this.pendingEvents;
    let journal = this.pendingJournal;
    this.pendingEvents = [];
    this.pendingJournal = [];
    let added = this.maxLogBytes === Number.POSITIVE_INFINITY ? 0 : sizeOf(events) + sizeOf(journal);
    if (this.logBytes + added > this.maxLogBytes) {
      // Nothing of it is written: its events get no seq in the store, and the owner goes back without logging.
      this.seq = this.record.seq;
      this.appended.splice(Math.max(0, this.appended.length - events.length));
      this.owner.full(this.logFull(added));
      draft = this.owner.draft();
      if (!draft) return;
      events = [];
      journal = [];
      added = 0;
    }
    // A literal with a fixed shape (not a spread) keeps stored records compact in memory.
    const base = this.record;
    const record: SessionRecord = {
      sessionId: base.sessionId,
      machineId: base.machineId,
      specHash: base.specHash,
      traceId: base.traceId,
      status: draft.status,
      version: base.version + 1,
      seq: this.seq,
      step: draft.step,
      snapshot: draft.snapshot,
      usage: this.usage,
      createdAt: base.createdAt,
      updatedAt: this.clock.now(),
    };
    if (base.fork) record.fork = base.fork;
    if (base.parent) record.parent = base.parent;
    if (draft.approval) record.approval = draft.approval;
    if (draft.error) record.error = draft.error;
    if (draft.calls) record.calls = draft.calls;
    if (draft.timers) record.timers = draft.timers;
    const logBytes = this.logBytes + added;
    if (logBytes > 0) record.logBytes = logBytes;
    if (draft.eventIds) record.eventIds = draft.eventIds;
    try {
      await this.store.commit({
        expectedVersion: base.version,
        record,
        events,
        journal,
        ...(this.fence === undefined ? {} : { fence: this.fence }),
      });
    } catch (error) {
      this.halted = true;
      this.owner.lost(toFlowError(error, 'STORE_CONFLICT'));
      return;
    }
    this.record = record;
    this.logBytes += added;
    this.owner.committed(record, events);
  }
}

function sizeOf(values: readonly unknown[]): number {
  let bytes = 0;
  for (const value of values) bytes += Buffer.byteLength(JSON.stringify(value));
  return bytes;
}
