import type { z } from 'zod';
import type { InvokeSpec } from '@flowing/spec';
import type { Clock } from '../clock.ts';
import type { CrashPoint } from '../crash-points.ts';
import type { Deadline } from '../deadline.ts';
import type { RuntimeEventType } from '../events.ts';
import type { CallSlots, ResolvedLimits } from '../limits.ts';
import type { LlmProvider, LlmUsage } from '../llm/types.ts';
import type { ApprovalRecord, JournalEntry, ParentLink, SessionRecord } from '../store/types.ts';
import type { AnyTool } from '../tool.ts';

/** What a generated machine passes to a tool actor. */
export interface ToolCallInput<TArgs = unknown> {
  args: TArgs;
  /** From the spec's `idempotencyKey` expression, when it has one. */
  idempotencyKey?: string;
}

/** How a machine call reaches the sessions of its runtime: its child session, started or found again. */
export interface ChildSessions {
  /** The stored record of a session, if there is one. */
  load(sessionId: string): Promise<SessionRecord | undefined>;
  /** Starts a child session with its input; resolves with its record once it is quiet (waiting, finished or failed). */
  start(machineId: string, input: unknown, sessionId: string, parent: ParentLink): Promise<SessionRecord>;
  /** Lets a stored child continue (a run a crash interrupted resumes); resolves with its record once it is quiet. */
  attach(sessionId: string): Promise<SessionRecord>;
  cancel(sessionId: string, reason: string): Promise<void>;
}

/**
 * Everything a call (a tool, a model call) may use of the session it runs in, and nothing more: its ids, the clock
 * and limits, its recorded outcome, and the ways to record, emit and commit. Calls never see the session itself.
 */
export interface CallContext {
  readonly sessionId: string;
  /** Journal key of this call, stable across resumes: `<invoke>@<step>`, agent tool calls add `/<n>`. */
  readonly key: string;
  /** The invoke of the spec this call belongs to (the state's invoke), when there is one. */
  readonly invoke?: InvokeSpec;
  /** An extract call's output schema, built from the spec's fields once per machine. */
  readonly outputSchema?: z.ZodType;
  readonly clock: Clock;
  readonly limits: ResolvedLimits;
  /** The runtime's limit on calls in flight (for calls nested in an agent loop, shared with the agent's slot). */
  readonly slots: CallSlots;
  /** Random number in [0, 1) for backoff jitter. */
  random(): number;
  readonly llm: LlmProvider;
  /** The tools of the machine (agent calls look theirs up here). */
  readonly tools: Readonly<Record<string, AnyTool>>;
  /** Aborts when the invocation stops (the state was left, the session cancelled or stopped). */
  readonly deadline: Deadline;
  /** The journal's record of this call (from an earlier run of it), if any. */
  recorded(): JournalEntry | undefined;
  /** Writes this call's journal entry with the next commit. */
  record(entry: JournalEntry): void;
  /** Appends an event to the session's log. */
  emit(type: RuntimeEventType, data: Record<string, unknown>): void;
  /** `durable`: resolves once everything so far is in the store; otherwise asks for a commit at the end of this turn. */
  commit(durable: boolean): Promise<void>;
  /** The approval the session holds now (requested, decided or consumed). */
  approval(): ApprovalRecord | undefined;
  /** Marks the approved call as paid out, so one approval runs one call. */
  consumeApproval(): void;
  /** Makes `approval` (a call the model proposed) the one the session waits for, and logs `approval.requested`. */
  requestApproval(approval: ApprovalRecord): void;
  /** The call waiting for the proposal `callId` ended undecided (its state was left): its approval is closed, logged. */
  withdrawApproval(callId: string): void;
  /** Tokens the session has spent so far. */
  usage(): LlmUsage;
  addUsage(usage: LlmUsage): void;
  /** A non-idempotent call started earlier but has no result: the session stops and waits for a person. */
  needsAttention(entry: JournalEntry): void;
  /** A named point where the crash tests kill the process (FLOWING_FAULT). */
  crashPoint(label: CrashPoint): void;
  /** The context of a call made inside this one (an agent's tool call), under its own key and deadline. */
  nested(key: string, deadline: Deadline): CallContext;
  /** The invoke id (the invoking state's name) this call belongs to. */
  readonly invokeId: string;
  /** How deep the session is in a tree of child sessions (0 for a session nobody invoked). */
  readonly depth: number;
  /** The sessions of the runtime, for a machine call's child session. */
  readonly children: ChildSessions;
  /**
   * The call waits for something outside the session (its child waits for a person): the session is quiet
   * (`waiting`) meanwhile. Resolves when the session is woken in its turn, rejects when the call's deadline aborts.
   */
  pause(): Promise<void>;
  /** True once the session's run stopped as a whole (parked, cancelled, taken over), not just this call's state left. */
  readonly runStopped: boolean;
}
