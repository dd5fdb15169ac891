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
  /** What the person who decided said (at most MAX_DECISION_REASON_CHARS); a rejected agent proposal tells the model. */
  reason?: string;
  /** Set when the approved call ran, so one approval pays out once. */
  consumed?: boolean;
  /**
   * A call an agent's model proposed: its journal key (`<invoke>@<step>/<n>`). `state` is then the agent's state, and
   * APPROVE / REJECT decide the call without a transition (see decideProposal).
   */
  callId?: string;
}

/**
 * An event id a session remembers (`send(event, { eventId })`): the hash of the event it came with, the first seq its
 * application logged, and its result once known. Written by the same commit as the event's first log entries, so an
 * applied event never lacks its id after a crash.
 */
export interface EventIdRecord {
  id: string;
  /** Hash of the event (type and payload) first sent with this id. */
  hash: string;
  /** Seq of the first event its application logged. */
  seq: number;
  /** The result, once the send settled: applied (the state and status it settled in, its last seq) or refused. */
  result?:
    | { applied: true; state: unknown; status: SessionStatus; lastSeq: number }
    | { applied: false; code: string; message: string; details?: unknown };
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
  /** Set on a session forked from another one: the parent and the event of its log the fork started from. */
  fork?: { parentId: string; forkedAt: number };
  /** Set on a child session started by another session's machine invoke: the parent, its invoking state and call. */
  parent?: ParentLink;
  /**
   * Deadlines (runtime clock, ms) of the pending `after` transitions, by delayed event type. A restored snapshot
   * schedules them again with the time left; the runtime wakes a quiet session up when the first one is due.
   */
  timers?: Readonly<Record<string, number>>;
  /** Bytes (UTF-8 JSON) of the events and journal writes stored for the session, counted against `limits.maxLogBytes`. */
  logBytes?: number;
  /** The last event ids sent with events (oldest first, at most EVENT_IDS_KEPT), so a repeat is not applied again. */
  eventIds?: readonly EventIdRecord[];
  createdAt: number;
  updatedAt: number;
}

/** Where a child session comes from: the session whose state invoked it, that call's journal key, its depth (1 = child). */
export interface ParentLink {
  sessionId: string;
  state: string;
  callId: string;
  depth: number;
}

/** A tool or model call, recorded outside XState: `started` before it runs, `completed` after. */
export interface JournalEntry {
  /** `<invoke id>@<step>` (agent tool calls add `/<n>`); stable across resumes. */
  key: string;
  kind: 'tool' | 'llm' | 'machine';
  /** The tool, the model call kind, or the invoked machine's id. */
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
  /**
   * Fencing token of the session lease the writer holds (stores with `leases`): the commit is refused with
   * `STORE_FENCED` unless it is the latest token granted for the session. Without one, a commit is refused while
   * another writer holds the lease.
   */
  fence?: number;
}

/** Which sessions `listSessions` returns: filters, page size and the cursor of the previous page. */
export interface SessionQuery {
  machineId?: string;
  /** One status, or any of several (e.g. `['running', 'waiting']`). */
  status?: SessionStatus | readonly SessionStatus[];
  /** Sessions per page, 1 to 500 (default 50). */
  limit?: number;
  /** `nextCursor` of the previous page; omitted for the first page. */
  cursor?: string;
}

/** One line of a session listing: enough to show and filter it without loading its snapshot. */
export interface SessionSummary {
  sessionId: string;
  machineId: string;
  status: SessionStatus;
  version: number;
  seq: number;
  createdAt: number;
  updatedAt: number;
  /** True when an approval was requested and not yet decided. */
  awaitingApproval: boolean;
  /** A child session's parent: the session whose machine invoke started it (absent for any other session). */
  parentId?: string;
}

/**
 * A page of sessions, newest first (`createdAt`, then `sessionId`, both descending). `nextCursor` is set when more
 * sessions may follow; a page can hold fewer than `limit` sessions and still have one (a store bounds the work of one
 * call). Paging is stable: a session created after the first page was read never shifts the ones that follow.
 */
export interface SessionPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

/** The answer to a lease request: granted with its fencing token, or held by another owner for about `retryInMs`. */
export type LeaseAttempt = { granted: true; token: number } | { granted: false; holder: string; retryInMs: number };

/**
 * Leases on sessions for stores shared between processes: one process steps a session at a time, and every commit
 * it makes carries the lease's fencing token, so a holder whose lease expired (paused, cut off, dead) can never
 * write again once another process took the session over.
 */
export interface SessionLeases {
  /** How long a lease lives without renewal (ms). */
  readonly ttlMs: number;
  /**
   * Takes the session's lease for `owner` (a new fencing token, larger than every earlier one). `create` allows a
   * session that is not stored yet; otherwise an unknown session is `SESSION_NOT_FOUND` and nothing is written.
   */
  acquire(sessionId: string, owner: string, options?: { create?: boolean }): Promise<LeaseAttempt>;
  /** Extends a lease still held with this token; false when it expired or another owner holds it now. */
  renew(sessionId: string, owner: string, token: number): Promise<boolean>;
  /** Gives the lease up (no-op when the token is no longer the holder's). */
  release(sessionId: string, token: number): Promise<void>;
  /** A page of sessions stored as `running` whose lease nobody holds: left mid-step by a process that is gone. */
  orphans(cursor?: string): Promise<{ sessions: SessionSummary[]; nextCursor?: string }>;
}

/** Called with newly committed events of one session, in seq order; may repeat events already seen. */
export type StoreFeedListener = (events: readonly RuntimeEvent[]) => void;

/**
 * Durable session state. A commit is all-or-nothing and refused with `STORE_CONFLICT` when the stored version is not
 * `expectedVersion` (so a SQLite transaction or a Redis Lua compare-and-set can implement it). When `commit`
 * resolves, the record, events and journal entries are durable to the store's promise (SQLite: fsynced; Redis: as
 * durable as the server's persistence settings).
 */
export interface SessionStore {
  readonly name: string;
  /** True for a store that refuses every commit (SQLite opened with `readOnly`): servers refuse writes up front. */
  readonly readOnly?: boolean;
  load(sessionId: string): Promise<SessionRecord | undefined>;
  commit(request: CommitRequest): Promise<void>;
  /** Events with `seq > afterSeq`, in order; at most `limit` of them. */
  readEvents(sessionId: string, afterSeq?: number, limit?: number): Promise<readonly RuntimeEvent[]>;
  readJournal(sessionId: string): Promise<readonly JournalEntry[]>;
  /** Sessions filtered by machine and status, newest first, one page at a time (refuses a bad cursor with `STORE_BAD_CURSOR`). */
  listSessions(query?: SessionQuery): Promise<SessionPage>;
  /**
   * Live feed of events other processes (and this one) commit to one session, from `afterSeq` on; returns the stop
   * function. Only stores shared between processes implement it (Redis reads the session's stream from the last seen
   * id; SQLite polls its file). Deliveries may repeat or trail events already seen: subscribers filter by seq.
   */
  follow?(sessionId: string, afterSeq: number, listener: StoreFeedListener): () => void;
  /** Session leases with fencing (stores shared between processes, e.g. Redis); the runtime holds one per step. */
  readonly leases?: SessionLeases;
  /**
   * Channel messages between processes (stores shared between processes, e.g. Redis): each commit carries the
   * `channel.sent` events it stores to the channel's stream, and receiving runtimes consume them (see ChannelFeed).
   */
  readonly channels?: ChannelFeed;
  /**
   * The last commit failure of a store whose reads can go on while its writes fail (SQLite on a full disk), when it
   * is recent (30 s) and no commit succeeded since; `/readyz` answers 503 with it.
   */
  writeFailure?(): StoreWriteFailure | undefined;
  /** What an acknowledged commit survives, as one line for logs and `/readyz` (e.g. "Redis durability: snapshot only"). */
  durability?(): Promise<StoreDurability>;
  /** Releases connections and file handles; the store is unusable afterwards. */
  close?(): Promise<void>;
}

/** A commit that failed for a reason of the store itself (not a version conflict): its code, message and time. */
export interface StoreWriteFailure {
  code: string;
  message: string;
  /** When it failed (ms since the epoch). */
  at: number;
}

/** What an acknowledged commit survives. */
export interface StoreDurability {
  /** One line for logs and health checks. */
  summary: string;
}

/** A channel message as a store carries it between processes: a `channel.sent` of a stored step, with its sender. */
export interface CarriedMessage {
  messageId: string;
  channel: string;
  key: string;
  data: Record<string, unknown>;
  /** The sending session. */
  from: string;
  /** The receiving session and machine, when the sending runtime knew them (else the receiving runtime routes it). */
  to?: string;
  machine?: string;
  /** When the sender logged it (ms since the epoch). */
  at: number;
}

/** One message handed to a consumer; `redelivered` when an earlier delivery of it was never acknowledged. */
export interface ChannelDelivery {
  message: CarriedMessage;
  redelivered: boolean;
}

/** What a consumer of a channel feed does with a message: true acknowledges it; false or a throw leaves it pending. */
export type ChannelHandler = (delivery: ChannelDelivery) => Promise<boolean>;

/**
 * The outbox of channel messages in a store shared between processes. A commit appends each `channel.sent` it stores
 * to the stream of the channel's first name segment (`billing.need_order` -> `billing`), in the same atomic write as
 * the step, so a stored message is never lost to a crash after the commit. Consumers of one group (one per receiving
 * machine) share the messages: each is handed to one consumer and acknowledged once handled; a message left pending
 * by a consumer that died is claimed by another after `claimIdleMs`, so it is delivered at least once.
 */
export interface ChannelFeed {
  /** How long a message stays pending with a consumer before another one claims it (ms). */
  readonly claimIdleMs: number;
  /** Consumes the streams of `segments` as `consumer` in `group` until the returned stop is called. */
  consume(options: { group: string; consumer: string; segments: readonly string[]; handle: ChannelHandler }): ChannelConsumer;
}

export interface ChannelConsumer {
  /** Stops reading; resolves once the messages being handled are settled. */
  stop(): Promise<void>;
}
