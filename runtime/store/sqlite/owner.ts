import { readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import type Database from 'better-sqlite3';
import { storeError } from '../errors.ts';

/**
 * Who writes a SQLite session file: one row, taken in a write transaction when a store opens the file for writing,
 * kept fresh by a heartbeat and checked inside every commit's transaction (fencing). The file's device and inode are
 * stored with it, so a copy of the file (a backup, a fixture) never looks owned.
 */
export interface FileOwner {
  /** This process's identity: pid and start time, so a later process that got the same pid is not taken for it. */
  token: string;
  pid: number;
  host: string;
  /** When the owner last proved it is alive (ms since the epoch). */
  heartbeatAt: number;
  /** When the owner took the file (ms since the epoch). */
  acquiredAt: number;
  dev: string;
  ino: string;
}

interface OwnerRow {
  token: string;
  pid: number;
  host: string;
  heartbeat_at: number;
  acquired_at: number;
  dev: string;
  ino: string;
}

/**
 * The identity of this process. Stores of one process share a file (they are one writer); `performance.timeOrigin`
 * tells this process from an earlier one that had the same pid.
 */
export const PROCESS_TOKEN = `${process.pid}@${Math.round(performance.timeOrigin)}`;

/** Why a claim took the file from its previous owner, for the log; undefined when nobody owned it. */
export type TakeoverReason = 'same-process' | 'copied-file' | 'owner-dead' | 'heartbeat-stale' | 'released';

export interface ClaimOptions {
  /** How old a heartbeat may be before another process takes the file over (ms). */
  staleAfterMs: number;
  now?: () => number;
}

/** The owner row as stored, or undefined when no process owns the file. */
export function readOwner(db: Database.Database): FileOwner | undefined {
  // A reader may look at a file of schema 2, written before there was an owner.
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'owner'").get()) return undefined;
  const row = db.prepare<[], OwnerRow>('SELECT token, pid, host, heartbeat_at, acquired_at, dev, ino FROM owner WHERE id = 1').get();
  return row && toOwner(row);
}

/**
 * Takes the file for this process in one IMMEDIATE transaction, or throws STORE_IN_USE naming the live owner. A file
 * is taken at once when nobody owns it, when this process does, when it is a copy (another device or inode), or when
 * its owner ran on this host and is gone; an owner elsewhere (or one whose pid is alive) must have let its heartbeat
 * go stale for `staleAfterMs`.
 */
export function claimOwnership(
  db: Database.Database,
  file: string,
  options: ClaimOptions,
): { previous?: FileOwner; reason?: TakeoverReason } {
  const now = options.now ?? Date.now;
  const { dev, ino } = fileId(file);
  const host = hostname();
  return db
    .transaction(() => {
      const previous = readOwner(db);
      const reason = previous && takeoverReason(previous, { dev, ino, host }, now() - options.staleAfterMs);
      if (previous && !reason) throw inUse(file, previous, now());
      const at = now();
      db.prepare(
        `INSERT INTO owner (id, token, pid, host, heartbeat_at, acquired_at, dev, ino) VALUES (1, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET token = excluded.token, pid = excluded.pid, host = excluded.host,
           heartbeat_at = excluded.heartbeat_at, acquired_at = excluded.acquired_at, dev = excluded.dev, ino = excluded.ino`,
      ).run(PROCESS_TOKEN, process.pid, host, at, previous?.token === PROCESS_TOKEN ? previous.acquiredAt : at, dev, ino);
      return previous ? { previous, ...(reason ? { reason } : {}) } : {};
    })
    .immediate();
}

function takeoverReason(
  owner: FileOwner,
  here: { dev: string; ino: string; host: string },
  staleBefore: number,
): TakeoverReason | undefined {
  if (owner.token === PROCESS_TOKEN) return 'same-process';
  if (owner.dev !== here.dev || owner.ino !== here.ino) return 'copied-file';
  // This pid is ours, so whoever wrote it with another token is an earlier process, gone.
  if (owner.host === here.host && (owner.pid === process.pid || !isAlive(owner.pid))) return 'owner-dead';
  if (owner.heartbeatAt < staleBefore) return 'heartbeat-stale';
  return undefined;
}

/** The fencing query of each connection, prepared once: it runs in every commit's transaction. */
const ownerTokenQueries = new WeakMap<Database.Database, Database.Statement<[], { token: string }>>();

/** Whether this process still owns the file; call inside a write transaction, so no takeover can come in between. */
export function ownsFile(db: Database.Database): boolean {
  let query = ownerTokenQueries.get(db);
  if (!query) {
    query = db.prepare<[], { token: string }>('SELECT token FROM owner WHERE id = 1');
    ownerTokenQueries.set(db, query);
  }
  return query.get()?.token === PROCESS_TOKEN;
}

/** Renews the heartbeat; false when another process took the file over meanwhile (this one is fenced). */
export function heartbeat(db: Database.Database, at: number): boolean {
  return db.prepare('UPDATE owner SET heartbeat_at = ? WHERE id = 1 AND token = ?').run(at, PROCESS_TOKEN).changes === 1;
}

/** Gives the file up (a clean stop), so the next writer needs no takeover; a no-op when another process owns it. */
export function releaseOwnership(db: Database.Database): void {
  db.prepare('DELETE FROM owner WHERE id = 1 AND token = ?').run(PROCESS_TOKEN);
}

/** STORE_IN_USE for `file`, naming its owner and the way to read it anyway. */
export function inUse(file: string, owner: FileOwner, now: number) {
  const age = Math.max(0, Math.round((now - owner.heartbeatAt) / 100) / 10);
  return storeError(
    'STORE_IN_USE',
    `${file} is in use by process ${owner.pid} on ${owner.host} (last heartbeat ${age} s ago); one process writes a SQLite ` +
      'session file at a time: stop that process, or open the file read-only (readOnly: true; `flowing sessions` and ' +
      '`flowing migrate --dry-run` do)',
    { details: { file, pid: owner.pid, host: owner.host, heartbeatAt: owner.heartbeatAt } },
  );
}

/** Device and inode of the file, as text (they can exceed 2^53). */
function fileId(file: string): { dev: string; ino: string } {
  const stat = statSync(file, { bigint: true });
  return { dev: String(stat.dev), ino: String(stat.ino) };
}

/** Whether a process of this host runs with `pid` (a zombie, dead but not yet reaped, counts as gone). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // it exists, under another user
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ...": the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS): the signal said it exists
  }
}

function toOwner(row: OwnerRow): FileOwner {
  return {
    token: row.token,
    pid: row.pid,
    host: row.host,
    heartbeatAt: row.heartbeat_at,
    acquiredAt: row.acquired_at,
    dev: row.dev,
    ino: row.ino,
  };
}
