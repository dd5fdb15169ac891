import type { CallContext } from '../calls/context.ts';
import type { CallSite, CallSpec } from '../calls/directory.ts';
import type { CrashPoints } from '../crash-points.ts';
import { LentSlots, type CallSlots } from '../limits.ts';
import { Deadline } from '../deadline.ts';
import type { RuntimeEventType } from '../events.ts';
import type { LlmUsage } from '../llm/types.ts';
import type { ApprovalRecord, JournalEntry } from '../store/types.ts';
import type { AnyTool } from '../tool.ts';
import type { RunHost } from './host.ts';
import type { RunLog } from './run-log.ts';

/** What the ledger needs of its runtime (shared by every call of every session). */
export type LedgerServices = Pick<RunHost, 'clock' | 'limits' | 'calls' | 'random' | 'llm' | 'crashPoint' | 'children'>;

/** What the ledger asks of the session it belongs to. */
export interface LedgerOwner {
  readonly sessionId: string;
  readonly tools: Readonly<Record<string, AnyTool>>;
  /** The key a call of `invokeId` starting now gets (stable when the same snapshot is restored later). */
  keyFor(invokeId: string): string;
  approval(): ApprovalRecord | undefined;
  consumeApproval(): void;
  requestApproval(approval: ApprovalRecord): void;
  withdrawApproval(callId: string): void;
  needsAttention(entry: JournalEntry): void;
  /** How deep the session is in a tree of child sessions. */
  readonly depth: number;
  /** A call paused (see CallContext.pause): the session may be quiet now. */
  callPaused(): void;
  /** True once the session's run stopped as a whole. */
  readonly runStopped: boolean;
}

/**
 * The calls of one session: the key and input of the latest call of each invoke, the calls in flight (so cancel can
 * wait for them to wind down), and the CallContext each call gets — the only view of the session a call has.
 */
export class CallLedger implements CallSite {
  /** Journal key of the latest call of each invoke id. */
  private readonly keys = new Map<string, string>();
  /** Input of the latest call of each invoke id (to put a call back in flight when its result is refused). */
  private readonly inputs = new Map<string, unknown>();
  private readonly inflight = new Set<Promise<unknown>>();
  /** The Deadline of the call of each invoke in flight. */
  private readonly deadlines = new Map<string, Deadline>();
  /** Calls paused until the session is woken, by invoke id: how to wake each. */
  private readonly paused = new Map<string, () => void>();

  constructor(
    private readonly services: LedgerServices,
    private readonly owner: LedgerOwner,
    private readonly log: RunLog,
  ) {}

  call(invokeId: string, input: unknown, spec: CallSpec, body: (call: CallContext) => Promise<unknown>): Promise<unknown> {
    const key = this.owner.keyFor(invokeId);
    this.keys.set(invokeId, key);
    this.inputs.set(invokeId, input);
    const deadline = new Deadline(this.services.clock);
    this.deadlines.set(invokeId, deadline);
    const running = body(new RunCallContext(this.services, this.owner, this, this.log, invokeId, key, deadline, spec));
    this.inflight.add(running);
    const settled = () => {
      deadline.dispose();
      if (this.deadlines.get(invokeId) === deadline) this.deadlines.delete(invokeId);
      this.inflight.delete(running);
    };
    running.then(settled, settled);
    return running;
  }

  stop(invokeId: string): void {
    this.deadlines.get(invokeId)?.abort();
  }

  isPaused(invokeId: string): boolean {
    return this.paused.has(invokeId);
  }

  /** The invoke ids of the paused calls. */
  pausedInvokes(): IterableIterator<string> {
    return this.paused.keys();
  }

  /** Pauses the call of `invokeId` until `wake`, or until its deadline aborts. */
  pause(invokeId: string, deadline: Deadline): Promise<void> {
    const woken = new Promise<void>((resolve) => this.paused.set(invokeId, resolve));
    this.owner.callPaused();
    return deadline.race(woken).finally(() => this.paused.delete(invokeId));
  }

  /** Wakes every paused call (in the session's turn); true when there was one. */
  wake(): boolean {
    if (this.paused.size === 0) return false;
    const waking = [...this.paused.values()];
    this.paused.clear();
    for (const resume of waking) resume();
    return true;
  }

  /** Journal key of the latest call of an invoke. */
  keyOf(invokeId: string): string | undefined {
    return this.keys.get(invokeId);
  }

  /** Input of the latest call of an invoke. */
  inputOf(invokeId: string): unknown {
    return this.inputs.get(invokeId);
  }

  /** The keys of the calls in flight in a persisted snapshot (its invoked children), for the stored record. */
  inflightCalls(snapshot: unknown): Record<string, string> | undefined {
    const children = (snapshot as { children?: Record<string, unknown> } | undefined)?.children;
    let calls: Record<string, string> | undefined;
    for (const id in children) {
      const key = this.keys.get(id);
      if (key !== undefined) (calls ??= {})[id] = key;
    }
    return calls;
  }

  /** Resolves when every call in flight has settled (after cancel aborted them). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }
}

/** The CallContext of one call of a session. */
class RunCallContext implements CallContext {
  readonly invoke;
  readonly outputSchema;
  /** A field, not a method: it is handed on as a function (backoff jitter). */
  readonly random: () => number;

  constructor(
    private readonly services: LedgerServices,
    private readonly owner: LedgerOwner,
    private readonly ledger: CallLedger,
    private readonly log: RunLog,
    readonly invokeId: string,
    readonly key: string,
    readonly deadline: Deadline,
    spec: CallSpec,
    readonly slots: CallSlots = services.calls,
  ) {
    this.invoke = spec.invoke;
    this.outputSchema = spec.outputSchema;
    this.random = services.random;
  }

  get sessionId() {
    return this.owner.sessionId;
  }
  get clock() {
    return this.services.clock;
  }
  get limits() {
    return this.services.limits;
  }
  get llm() {
    return this.services.llm;
  }
  get tools() {
    return this.owner.tools;
  }
  recorded() {
    return this.log.journal.get(this.key);
  }
  record(entry: JournalEntry) {
    this.log.journalWrite(entry);
  }
  emit(type: RuntimeEventType, data: Record<string, unknown>) {
    this.log.append(type, data);
  }
  commit(durable: boolean): Promise<void> {
    if (durable) return this.log.flush();
    this.log.scheduleCommit();
    return Promise.resolve();
  }
  approval() {
    return this.owner.approval();
  }
  consumeApproval() {
    this.owner.consumeApproval();
  }
  requestApproval(approval: ApprovalRecord) {
    this.owner.requestApproval(approval);
  }
  withdrawApproval(callId: string) {
    this.owner.withdrawApproval(callId);
  }
  usage(): LlmUsage {
    return this.log.usage;
  }
  addUsage(usage: LlmUsage) {
    this.log.addUsage(usage);
  }
  needsAttention(entry: JournalEntry) {
    this.owner.needsAttention(entry);
  }
  crashPoint(label: Parameters<CrashPoints>[0]) {
    this.services.crashPoint(label);
  }
  nested(key: string, deadline: Deadline): CallContext {
    return new RunCallContext(this.services, this.owner, this.ledger, this.log, this.invokeId, key, deadline, {}, this.lentSlots());
  }
  /** Calls nested in this one share one lending of its slot (made when the first of them is). */
  private lent?: LentSlots;
  private lentSlots(): LentSlots {
    return (this.lent ??= new LentSlots(this.slots));
  }
  get depth() {
    return this.owner.depth;
  }
  get children() {
    return this.services.children;
  }
  pause(): Promise<void> {
    return this.ledger.pause(this.invokeId, this.deadline);
  }
  get runStopped() {
    return this.owner.runStopped;
  }
}
