import type Database from 'better-sqlite3';
import { storeError } from '../errors.ts';
import { claimOwnership, heartbeat, ownsFile, readOwner, releaseOwnership, type FileOwner, type TakeoverReason } from './owner.ts';

/** A writer store's hold on its file: taken at open, renewed by a heartbeat, checked in every commit, given up at close. */
export interface Ownership {
  /** Set when the claim took the file over from another process: who it was and why it could be taken. */
  readonly tookOver?: { previous: FileOwner; reason: TakeoverReason };
  /** STORE_FENCED once another process took the file over; never cleared. */
  fenced(): Error | undefined;
  /** Throws STORE_FENCED unless this process still owns the file. Call inside the commit's write transaction. */
  check(): void;
  /** Stops the heartbeat and gives the file up when this was the last open writer of this process on it. */
  release(): void;
}

export interface OwnershipOptions {
  ttlMs: number;
  /** Called once, when the store finds it was fenced. */
  onFenced?: (error: Error) => void;
}

/** Open writer stores of this process, per file: the owner row is released when the last one closes. */
const openWriters = new Map<string, number>();

/**
 * Claims `file` for this process (STORE_IN_USE when a live process owns it) and keeps the claim: a heartbeat every
 * third of the TTL, and fencing from the moment the heartbeat or a commit finds another owner.
 */
export function holdOwnership(db: Database.Database, file: string, options: OwnershipOptions): Ownership {
  const claimed = claimOwnership(db, file, { staleAfterMs: options.ttlMs });
  openWriters.set(file, (openWriters.get(file) ?? 0) + 1);
  let fenced: Error | undefined;
  let timer: NodeJS.Timeout | undefined;

  const fence = (): Error => {
    if (fenced) return fenced;
    let owner: FileOwner | undefined;
    try {
      owner = readOwner(db);
    } catch {
      owner = undefined;
    }
    fenced = storeError(
      'STORE_FENCED',
      `${file} was taken over by ${owner ? `process ${owner.pid} on ${owner.host}` : 'another process'} while this one did not renew its ownership (paused longer than ${options.ttlMs} ms?); this process no longer writes it: stop it, it cannot take the file back`,
      { details: { file, ...(owner ? { pid: owner.pid, host: owner.host } : {}) } },
    );
    stopHeartbeat();
    try {
      options.onFenced?.(fenced);
    } catch {
      // the callback's failure is its own; the store is fenced either way
    }
    return fenced;
  };
  const stopHeartbeat = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  timer = setInterval(
    () => {
      try {
        if (!heartbeat(db, Date.now())) fence();
      } catch {
        // Locked past the busy timeout, or a disk error: the next beat tries again, and commits check ownership themselves.
      }
    },
    Math.max(30, Math.floor(options.ttlMs / 3)),
  );
  timer.unref();

  return {
    ...(claimed.previous && claimed.reason && claimed.reason !== 'same-process'
      ? { tookOver: { previous: claimed.previous, reason: claimed.reason } }
      : {}),
    fenced: () => fenced,
    check() {
      // Inside the write lock: no takeover can come between this check and the commit.
      if (fenced || !ownsFile(db)) throw fence();
    },
    release() {
      stopHeartbeat();
      const left = (openWriters.get(file) ?? 1) - 1;
      if (left > 0) openWriters.set(file, left);
      else openWriters.delete(file);
      // A clean stop gives the file up, so the next writer (on any host) needs no takeover; another store of this
      // process on the file keeps it. A fenced store leaves the row alone: it is another process's.
      if (left > 0 || fenced) return;
      try {
        releaseOwnership(db);
      } catch {
        // Locked or failing: the next writer takes the file over as from a process that is gone.
      }
    },
  };
}
