import type Database from 'better-sqlite3';
import { storeError } from '../errors.ts';

/**
 * The schema, one migration per version: `PRAGMA user_version` holds how many have run. Migrations only ever get
 * appended; each runs in its own transaction together with the version bump, so a crash leaves one version or the next.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sessions (
     session_id TEXT PRIMARY KEY,
     machine_id TEXT NOT NULL,
     status TEXT NOT NULL,
     version INTEGER NOT NULL,
     seq INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     awaiting_approval INTEGER NOT NULL,
     record TEXT NOT NULL,
     record_check TEXT NOT NULL
   );
   CREATE INDEX sessions_newest ON sessions (created_at DESC, session_id DESC);
   CREATE INDEX sessions_by_machine ON sessions (machine_id, created_at DESC, session_id DESC);
   CREATE INDEX sessions_by_status ON sessions (status, created_at DESC, session_id DESC);
   CREATE TABLE events (
     session_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     body TEXT NOT NULL,
     body_check TEXT NOT NULL,
     PRIMARY KEY (session_id, seq)
   ) WITHOUT ROWID;
   CREATE TABLE journal (
     session_id TEXT NOT NULL,
     key TEXT NOT NULL,
     body TEXT NOT NULL,
     body_check TEXT NOT NULL,
     PRIMARY KEY (session_id, key)
   ) WITHOUT ROWID;`,
  // A child session's parent, for listings: a column, so a listing never parses records (snapshots grow).
  `ALTER TABLE sessions ADD COLUMN parent_id TEXT;
   UPDATE sessions SET parent_id = json_extract(record, '$.parent.sessionId') WHERE json_type(record, '$.parent') = 'object';`,
  // The process that writes the file (one row at most): see owner.ts.
  `CREATE TABLE owner (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     token TEXT NOT NULL,
     pid INTEGER NOT NULL,
     host TEXT NOT NULL,
     heartbeat_at INTEGER NOT NULL,
     acquired_at INTEGER NOT NULL,
     dev TEXT NOT NULL,
     ino TEXT NOT NULL
   );`,
];

/**
 * The oldest schema a read-only store can read: its reads need the tables and columns of that version (the owner
 * table only matters to writers). A reader never migrates a file; an older one is upgraded by opening it for writing.
 */
export const MIN_READABLE_VERSION = 2;

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** `synchronous` levels by name; FULL fsyncs the WAL at every commit. */
export const SYNCHRONOUS_LEVELS = { OFF: 0, NORMAL: 1, FULL: 2, EXTRA: 3 } as const;
export type SynchronousLevel = keyof typeof SYNCHRONOUS_LEVELS;

/** The connection settings a store applies on every open, and reads back to prove it. */
export interface SqliteSettings {
  journalMode: string;
  synchronous: number;
  busyTimeoutMs: number;
}

/**
 * Sets WAL, `synchronous` and `busy_timeout` on a connection. They are per connection: a reopened WAL database would
 * otherwise run at the default `synchronous` (NORMAL in WAL mode can lose the last commits on power loss).
 */
export function applySettings(db: Database.Database, synchronous: SynchronousLevel, busyTimeoutMs: number): SqliteSettings {
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  const mode = String(db.pragma('journal_mode = WAL', { simple: true }));
  if (mode !== 'wal')
    throw storeError(
      'STORE_UNAVAILABLE',
      `SQLite refused WAL mode (journal_mode is '${mode}'); use a file on a local disk, not :memory: or a network share`,
    );
  db.pragma(`synchronous = ${SYNCHRONOUS_LEVELS[synchronous]}`);
  return readSettings(db);
}

export function readSettings(db: Database.Database): SqliteSettings {
  return {
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: Number(db.pragma('synchronous', { simple: true })),
    busyTimeoutMs: Number(db.pragma('busy_timeout', { simple: true })),
  };
}

/** Refuses a file written by a newer schema; answers the file's version. */
export function checkVersion(db: Database.Database, file: string): number {
  const current = Number(db.pragma('user_version', { simple: true }));
  if (current > SCHEMA_VERSION) {
    throw storeError(
      'STORE_SCHEMA_TOO_NEW',
      `${file} has schema version ${current}; this Flowing writes version ${SCHEMA_VERSION}. Upgrade Flowing before opening it`,
    );
  }
  return current;
}

/** Runs the migrations the file has not seen; refuses a file written by a newer schema. */
export function migrate(db: Database.Database, file: string): void {
  const current = checkVersion(db, file);
  for (let version = current; version < SCHEMA_VERSION; version++) {
    db.transaction(() => {
      // Re-read inside the write lock: another process may have migrated meanwhile.
      if (Number(db.pragma('user_version', { simple: true })) !== version) return;
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
