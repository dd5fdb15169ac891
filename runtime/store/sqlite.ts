import { resolve } from 'node:path';
import type { RuntimeEvent } from '../events.ts';
import { decodeEvent, decodeJournal, decodeRecord, encode } from './codec.ts';
import { checkCommit } from './commit-check.ts';
import { storeError } from './errors.ts';
import { FeedFollowers } from './feed.ts';
import { encodeCursor, planList } from './query.ts';
import { openReadOnly, openWritable, translate } from './sqlite/open.ts';
import { readOwner, type FileOwner, type TakeoverReason } from './sqlite/owner.ts';
import { holdOwnership, type Ownership } from './sqlite/ownership.ts';
import { readSettings, SYNCHRONOUS_LEVELS, type SqliteSettings, type SynchronousLevel } from './sqlite/schema.ts';
import type { CommitRequest, SessionPage, SessionQuery, SessionRecord, SessionStore, SessionSummary, StoreWriteFailure } from './types.ts';

/** Where `createSqliteStore` keeps sessions when no file is given, relative to the project directory. */
export const DEFAULT_SQLITE_FILE = '.flowing/sessions.db';

/** Most events one poll of the feed reads per session. */
const FEED_BATCH = 1_000;

export interface SqliteStoreOptions {
  /** The database file; relative paths resolve against `projectDir`. Default `.flowing/sessions.db`. */
  file?: string;
  /** Default: the working directory. */
  projectDir?: string;
  /** Default FULL: a commit is on disk when it returns. NORMAL trades the last commits on power loss for speed. */
  synchronous?: SynchronousLevel;
  /** How long a write waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /** How often `follow` looks for events other connections wrote (default 50 ms). */
  pollMs?: number;
  /** Events read per query by `readEvents`; longer logs are read page by page, yielding in between (default 1000). */
  readPageSize?: number;
  /** Most commits written by one transaction of the group commit (default 256). */
  maxCommitsPerTransaction?: number;
  /**
   * The largest the database may grow, in bytes (SQLite's `max_page_count`); default: no limit but the disk's.
   * A commit past it fails like one on a full disk: STORE_UNAVAILABLE (SQLITE_FULL), and `/readyz` says so.
   */
  maxBytes?: number;
  /**
   * Open the file for reading only: no ownership taken (a process that owns the file may be writing it), no schema
   * migration, and every commit refused with STORE_READ_ONLY. The file must exist. For listings and inspection
   * beside a running server (`flowing sessions`, `flowing migrate --dry-run`).
   */
  readOnly?: boolean;
  /**
   * How long the file's owner may go without a heartbeat before another process takes the file over (default
   * 10000 ms; the heartbeat runs every third of it). An owner on this host whose process is gone is taken over at once.
   */
  ownerTtlMs?: number;
  /**
   * Called once when this store finds another process took the file over (after a pause longer than `ownerTtlMs`):
   * from then on every commit is refused with STORE_FENCED.
   */
  onFenced?: (error: Error) => void;
}

/** How long an owner may go without a heartbeat before another process takes the file over, by default. */
export const DEFAULT_OWNER_TTL_MS = 10_000;

/** How long a failed commit keeps `writeFailure()` (and `/readyz`) reporting it when no commit succeeds meanwhile. */
const WRITE_FAILURE_WINDOW_MS = 30_000;

/** What an acknowledged commit survives at each `synchronous` level, for `durability()`. */
const SYNCHRONOUS_MEANING: Readonly<Record<SynchronousLevel, string>> = {
  OFF: 'no fsync: a power loss can lose commits or damage the file',
  NORMAL: 'fsync at checkpoints only: a power loss can lose the last commits',
  FULL: 'every commit fsynced before it is acknowledged',
  EXTRA: 'every commit fsynced before it is acknowledged, the directory too',
};

/** The SQLite store, plus what it applied to its connection (for health checks and the D6 test). */
export interface SqliteStore extends SessionStore {
  readonly file: string;
  /** True when opened with `readOnly`: commits are refused with STORE_READ_ONLY. */
  readonly readOnly: boolean;
  settings(): SqliteSettings;
  /** The process that owns the file for writing now, as stored (undefined when none does). */
  owner(): FileOwner | undefined;
  /** Set when opening took the file over from another owner: who it was and why it could be taken. */
  readonly tookOver?: { previous: FileOwner; reason: TakeoverReason };
  close(): Promise<void>;
}

interface PendingCommit {
  request: CommitRequest;
  resolve: () => void;
  reject: (error: unknown) => void;
  /** Why this commit alone was rolled back. */
  refused?: unknown;
}

interface SessionRow {
  session_id: string;
  machine_id: string;
  status: SessionRecord['status'];
  version: number;
  seq: number;
  created_at: number;
  updated_at: number;
  awaiting_approval: number;
  parent_id: string | null;
}

/**
 * The embedded default store: one SQLite file in WAL mode, `synchronous=FULL` and a busy timeout set on every open,
 * record + events + journal of a commit written all or nothing, versioned schema. Commits asked for in one turn of the
 * event loop share one transaction (group commit: one fsync for many sessions), each in a savepoint of its own so a
 * refused commit rejects alone. Rows failing their checksum refuse their session with `FLOW_STORE_CORRUPT`; other
 * sessions keep loading.
 * @example createRuntime({ machines, store: createSqliteStore() }) // .flowing/sessions.db of the working directory
 */
export function createSqliteStore(options: SqliteStoreOptions = {}): SqliteStore {
  const file = resolve(options.projectDir ?? process.cwd(), options.file ?? DEFAULT_SQLITE_FILE);
  const synchronous = options.synchronous ?? 'FULL';
  if (!(synchronous in SYNCHRONOUS_LEVELS))
    throw storeError('STORE_BAD_OPTIONS', `synchronous must be one of ${Object.keys(SYNCHRONOUS_LEVELS).join(', ')}`);
  const maxGroup = options.maxCommitsPerTransaction ?? 256;
  if (!Number.isInteger(maxGroup) || maxGroup < 1)
    throw storeError('STORE_BAD_OPTIONS', `maxCommitsPerTransaction must be a whole number of at least 1, not ${String(maxGroup)}`);
  const pageSize = Math.max(1, Math.floor(options.readPageSize ?? 1_000));
  const readOnly = options.readOnly === true;
  const ownerTtlMs = options.ownerTtlMs ?? DEFAULT_OWNER_TTL_MS;
  if (!Number.isInteger(ownerTtlMs) || ownerTtlMs < 100)
    throw storeError('STORE_BAD_OPTIONS', `ownerTtlMs must be a whole number of milliseconds of at least 100, not ${String(ownerTtlMs)}`);
  const db = readOnly
    ? openReadOnly(file, options.busyTimeoutMs ?? 5_000)
    : openWritable(file, synchronous, options.busyTimeoutMs ?? 5_000);
  let ownership: Ownership | undefined;
  if (!readOnly) {
    try {
      ownership = holdOwnership(db, file, { ttlMs: ownerTtlMs, onFenced: options.onFenced });
    } catch (error) {
      db.close();
      throw translate(error, file);
    }
  }
  if (options.maxBytes !== undefined) {
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    db.pragma(`max_page_count = ${Math.max(1, Math.floor(options.maxBytes / pageSize))}`);
  }
  let lastWriteFailure: StoreWriteFailure | undefined;

  const q = {
    version: db.prepare<[string], { version: number; seq: number }>('SELECT version, seq FROM sessions WHERE session_id = ?'),
    load: db.prepare<[string], { record: string; record_check: string }>('SELECT record, record_check FROM sessions WHERE session_id = ?'),
    upsert:
      db.prepare(`INSERT INTO sessions (session_id, machine_id, status, version, seq, created_at, updated_at, awaiting_approval, record, record_check, parent_id)
      VALUES (@sessionId, @machineId, @status, @version, @seq, @createdAt, @updatedAt, @awaiting, @body, @check, @parentId)
      ON CONFLICT (session_id) DO UPDATE SET status = excluded.status, version = excluded.version, seq = excluded.seq,
        updated_at = excluded.updated_at, awaiting_approval = excluded.awaiting_approval, record = excluded.record, record_check = excluded.record_check`),
    event: db.prepare('INSERT INTO events (session_id, seq, body, body_check) VALUES (?, ?, ?, ?)'),
    journal: db.prepare(
      'INSERT INTO journal (session_id, key, body, body_check) VALUES (?, ?, ?, ?) ON CONFLICT (session_id, key) DO UPDATE SET body = excluded.body, body_check = excluded.body_check',
    ),
    events: db.prepare<[string, number, number], { seq: number; body: string; body_check: string }>(
      'SELECT seq, body, body_check FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    readJournal: db.prepare<[string], { key: string; body: string; body_check: string }>(
      'SELECT key, body, body_check FROM journal WHERE session_id = ? ORDER BY key',
    ),
  };

  const writeOne = db.transaction((request: CommitRequest) => {
    const { record, events, journal } = request;
    checkCommit(request, q.version.get(record.sessionId));
    const { body, check } = encode(record);
    q.upsert.run({
      sessionId: record.sessionId,
      machineId: record.machineId,
      status: record.status,
      version: record.version,
      seq: record.seq,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      awaiting: record.approval && !record.approval.decision ? 1 : 0,
      body,
      check,
      parentId: record.parent?.sessionId ?? null,
    });
    for (const event of events) {
      const stored = encode(event);
      q.event.run(record.sessionId, event.seq, stored.body, stored.check);
    }
    for (const entry of journal) {
      const stored = encode(entry);
      q.journal.run(record.sessionId, entry.key, stored.body, stored.check);
    }
  });

  // Group commit: the commits asked for within one turn of the event loop are written by one transaction, so many
  // sessions share one fsync. Each commit is a savepoint of its own: a refused one (a version conflict) is rolled
  // back alone and rejects only its caller. Nothing resolves before the transaction holding it is on disk.
  const writeGroup = db.transaction((group: PendingCommit[]) => {
    ownership?.check();
    for (const pending of group) {
      try {
        writeOne(pending.request);
      } catch (error) {
        // An I/O error can make SQLite roll the whole transaction back: then no commit of the group may go on alone.
        if (!db.inTransaction) throw error;
        pending.refused = error;
      }
    }
  });
  let queued: PendingCommit[] = [];
  let flushScheduled = false;

  function flushCommits() {
    flushScheduled = false;
    while (queued.length > 0) {
      const group = queued.length <= maxGroup ? queued : queued.slice(0, maxGroup);
      queued = queued.length <= maxGroup ? [] : queued.slice(maxGroup);
      let failed: unknown;
      try {
        if (closed) throw storeError('STORE_CLOSED', `the SQLite store on ${file} was closed`);
        if (readOnly) throw readOnlyError();
        writeGroup.immediate(group);
        ownCommits = true;
        lastWriteFailure = undefined;
      } catch (error) {
        failed = translate(error, file);
        const { code, message } = failed as { code?: unknown; message?: unknown };
        if (code === 'STORE_UNAVAILABLE' || code === 'FLOW_STORE_CORRUPT' || code === 'STORE_FENCED')
          lastWriteFailure = { code: String(code), message: String(message), at: Date.now() };
      }
      for (const pending of group) {
        if (failed !== undefined) pending.reject(failed);
        else if (pending.refused !== undefined) pending.reject(translate(pending.refused, file));
        else pending.resolve();
      }
    }
  }

  function readOnlyError(): Error {
    return storeError(
      'STORE_READ_ONLY',
      `the SQLite store on ${file} was opened read-only; writes go through the process that owns the file`,
      {
        details: { file },
      },
    );
  }

  const followers = new FeedFollowers();
  let poller: NodeJS.Timeout | undefined;
  let closed = false;
  // `data_version` changes when another connection commits; with our own commits it tells when a poll can find news.
  let seenVersion = -1;
  let ownCommits = true;
  let lagging = false;
  followers.onChange = () => {
    ownCommits = true; // a new follower starts from its own cursor: look once whatever the version says
    if (followers.size > 0 && !poller && !closed) {
      poller = setInterval(poll, options.pollMs ?? 50);
      poller.unref();
    } else if (followers.size === 0 && poller) {
      clearInterval(poller);
      poller = undefined;
    }
  };

  function poll() {
    let version: number;
    try {
      version = Number(db.pragma('data_version', { simple: true }));
    } catch {
      return; // locked or closing: the next tick asks again
    }
    if (version === seenVersion && !ownCommits && !lagging) return;
    seenVersion = version;
    ownCommits = false;
    lagging = false;
    for (const [sessionId, after] of followers.cursors()) {
      try {
        const events = readEventsNow(sessionId, after, FEED_BATCH);
        if (events.length === FEED_BATCH) lagging = true; // more than one batch behind: read again next tick
        followers.dispatch(sessionId, events);
      } catch {
        // A corrupt or locked row: readEvents reports it with its code to whoever reads; the feed tries again next tick.
        lagging = true;
      }
    }
  }

  function readEventsNow(sessionId: string, afterSeq: number, limit: number): RuntimeEvent[] {
    const rows = q.events.all(sessionId, Math.max(0, Math.floor(afterSeq) || 0), limit);
    return rows.map((row) => decodeEvent(row.body, row.body_check, sessionId, row.seq));
  }

  function guard<T>(fn: () => T): T {
    if (closed) throw storeError('STORE_CLOSED', `the SQLite store on ${file} was closed`);
    try {
      return fn();
    } catch (error) {
      throw translate(error, file);
    }
  }

  return {
    name: 'sqlite',
    file,
    readOnly,
    ...(ownership?.tookOver ? { tookOver: ownership.tookOver } : {}),
    settings: () => guard(() => readSettings(db)),
    owner: () => guard(() => readOwner(db)),
    writeFailure() {
      // A fenced store never writes again: it keeps saying so.
      const fenced = ownership?.fenced();
      if (fenced) return { code: 'STORE_FENCED', message: fenced.message, at: Date.now() };
      return lastWriteFailure && Date.now() - lastWriteFailure.at < WRITE_FAILURE_WINDOW_MS ? lastWriteFailure : undefined;
    },
    async durability() {
      if (readOnly) return { summary: 'SQLite: opened read-only (the process that owns the file writes it)' };
      return { summary: `SQLite durability: WAL, synchronous=${synchronous} (${SYNCHRONOUS_MEANING[synchronous]})` };
    },
    async load(sessionId) {
      return guard(() => {
        const row = q.load.get(sessionId);
        return row ? decodeRecord(row.record, row.record_check, sessionId) : undefined;
      });
    },
    commit(request) {
      if (closed) return Promise.reject(storeError('STORE_CLOSED', `the SQLite store on ${file} was closed`));
      if (readOnly) return Promise.reject(readOnlyError());
      const fenced = ownership?.fenced();
      if (fenced) return Promise.reject(fenced);
      return new Promise<void>((resolve, reject) => {
        queued.push({ request, resolve, reject });
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flushCommits);
        }
      });
    },
    async readEvents(sessionId, afterSeq = 0, limit = Number.MAX_SAFE_INTEGER) {
      const max = Math.max(0, Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER));
      const out: RuntimeEvent[] = [];
      let after = afterSeq;
      for (;;) {
        const want = Math.min(pageSize, max - out.length);
        const page = guard(() => readEventsNow(sessionId, after, want));
        for (const event of page) out.push(event);
        if (page.length < want || out.length >= max) return out;
        after = page[page.length - 1]!.seq;
        // A long log is read in pages with a turn of the event loop between them, so other sessions keep going.
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    async readJournal(sessionId) {
      return guard(() => q.readJournal.all(sessionId).map((row) => decodeJournal(row.body, row.body_check, sessionId, row.key)));
    },
    async listSessions(query?: SessionQuery): Promise<SessionPage> {
      const plan = planList(query);
      return guard(() => {
        const where: string[] = [];
        const params: Array<string | number> = [];
        if (plan.machineId !== undefined) {
          where.push('machine_id = ?');
          params.push(plan.machineId);
        }
        if (plan.statuses) {
          where.push(`status IN (${[...plan.statuses].map(() => '?').join(', ')})`);
          params.push(...plan.statuses);
        }
        if (plan.after) {
          where.push('(created_at < ? OR (created_at = ? AND session_id < ?))');
          params.push(plan.after.createdAt, plan.after.createdAt, plan.after.sessionId);
        }
        const sql = `SELECT session_id, machine_id, status, version, seq, created_at, updated_at, awaiting_approval, parent_id FROM sessions
          ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, session_id DESC LIMIT ?`;
        const rows = db.prepare<Array<string | number>, SessionRow>(sql).all(...params, plan.limit + 1);
        const sessions: SessionSummary[] = rows.slice(0, plan.limit).map((r) => ({
          sessionId: r.session_id,
          machineId: r.machine_id,
          status: r.status,
          version: r.version,
          seq: r.seq,
          createdAt: r.created_at,
          updatedAt: r.updated_at,
          awaitingApproval: r.awaiting_approval === 1,
          ...(r.parent_id ? { parentId: r.parent_id } : {}),
        }));
        const last = sessions[sessions.length - 1];
        return { sessions, ...(rows.length > plan.limit && last ? { nextCursor: encodeCursor(last) } : {}) };
      });
    },
    follow(sessionId, afterSeq, listener) {
      if (closed) throw storeError('STORE_CLOSED', `the SQLite store on ${file} was closed`);
      return followers.add(sessionId, afterSeq, listener);
    },
    async close() {
      if (closed) return;
      flushCommits(); // commits already asked for are written, not dropped
      closed = true;
      if (poller) clearInterval(poller);
      poller = undefined;
      ownership?.release();
      db.close();
    },
  };
}
