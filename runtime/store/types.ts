import type { FlowError } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';

/** Where a session stands, as shown to callers. */
export type SessionStatus = 'running' | 'waiting' | 'done' | 'error' | 'cancelled' | 'needs_attention';

/** The approval a session waits for (or got) before a high-risk tool. */
export interface ApprovalRecord {
  id: string;
  /** The state that waits for APPROVE / REJECT. */
  state: string;
  tool: string;
  args: unknown;
  argsHash: string;
  decision?: 'approved' | 'rejected';
  /** Set when the approved call ran, so one approval pays out once. */
  consumed?: boolean;
}

/** What a store keeps about one session besides its events: the persisted XState snapshot and the runtime's counters. */
export interface SessionRecord {
  sessionId: string;
  machineId: string;
  specHash: string;
  traceId: string;
  status: SessionStatus;
  /** Bumped by every commit; the optimistic check compares it. */
  version: number;
  /** Seq of the last event written. */
  seq: number;
  /** Snapshots taken so far (the step counter behind `maxSteps` and call keys). */
  step: number;
  /** `actor.getPersistedSnapshot()` of the machine. */
  snapshot: unknown;
  usage: { promptTokens: number; completionTokens: number };
  approval?: ApprovalRecord;
  error?: FlowError;
  /**
   * Journal keys of the calls in flight in `snapshot`, by invoke id. A restored snapshot restarts them; this is how
   * they find their journal entries again (the step counter may have moved on in another parallel region).
   */
  calls?: Readonly<Record<string, string>>;
  createdAt: number;
  updatedAt: number;
}

/** A tool or model call, recorded outside XState: `started` before it runs, `completed` after. */
export interface JournalEntry {
  /** `<invoke id>@<step>` (agent tool calls add `/<n>`); stable across resumes. */
  key: string;
  kind: 'tool' | 'llm';
  name: string;
  idempotent: boolean;
  startedAt: number;
  completed?: { at: number; ok: true; output: unknown } | { at: number; ok: false; error: FlowError };
}

/** One atomic write: the new record (version = expectedVersion + 1), new events and journal upserts. */
export interface CommitRequest {
  /** 0 when the session is created. */
  expectedVersion: number;
  record: SessionRecord;
  events: readonly RuntimeEvent[];
  journal: readonly JournalEntry[];
}

/**
 * Durable session state. A commit is all-or-nothing and refused with `STORE_CONFLICT` when the stored version is not
 * `expectedVersion` (so a SQLite transaction or a Redis Lua compare-and-set can implement it).
 */
export interface SessionStore {
  readonly name: string;
  load(sessionId: string): Promise<SessionRecord | undefined>;
  commit(request: CommitRequest): Promise<void>;
  /** Events with `seq > afterSeq`, in order; at most `limit` of them. */
  readEvents(sessionId: string, afterSeq?: number, limit?: number): Promise<readonly RuntimeEvent[]>;
  readJournal(sessionId: string): Promise<readonly JournalEntry[]>;
  listSessions(): Promise<readonly string[]>;
}
