import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { storeError } from '../errors.ts';
import { applySettings, checkVersion, MIN_READABLE_VERSION, migrate, type SynchronousLevel } from './schema.ts';

/** A connection that only reads: SQLite refuses writes on it, nothing is migrated, the file must exist. */
export function openReadOnly(file: string, busyTimeoutMs: number): Database.Database {
  if (!existsSync(file))
    throw storeError('STORE_UNAVAILABLE', `${file} does not exist: nothing was stored there yet (a read-only store never creates it)`, {
      details: { file, missing: true },
    });
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    const version = checkVersion(db, file);
    if (version < MIN_READABLE_VERSION)
      throw storeError(
        'STORE_UNAVAILABLE',
        `${file} has schema version ${version}, older than a read-only store reads (${MIN_READABLE_VERSION}); open it once for writing to upgrade it`,
        { details: { file } },
      );
    return db;
  } catch (error) {
    db?.close();
    throw translate(error, file);
  }
}

/** A connection for writing: folder created, WAL and the durability settings applied, the schema migrated. */
export function openWritable(file: string, synchronous: SynchronousLevel, busyTimeoutMs: number): Database.Database {
  let db: Database.Database | undefined;
  try {
    mkdirSync(dirname(file), { recursive: true });
    db = new Database(file);
    applySettings(db, synchronous, busyTimeoutMs);
    migrate(db, file);
    return db;
  } catch (error) {
    db?.close();
    throw translate(error, file);
  }
}

/** SQLite's errors as store codes; errors that already carry one pass through. */
export function translate(error: unknown, file: string): unknown {
  if (error && typeof error === 'object' && typeof (error as { code?: unknown }).code === 'string') {
    const code = (error as { code: string }).code;
    if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
      return storeError('FLOW_STORE_CORRUPT', `${file} is damaged (${code}); restore it from a backup`, { cause: error });
    }
    if (code.startsWith('SQLITE_') || code === 'ENOENT' || code === 'EACCES' || code === 'EROFS') {
      return storeError('STORE_UNAVAILABLE', `SQLite store ${file}: ${(error as Error).message} (${code})`, { cause: error });
    }
    return error;
  }
  return storeError('STORE_UNAVAILABLE', `SQLite store ${file}: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
