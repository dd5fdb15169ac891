import { createMemoryStore, FlowingError, type SessionStore } from '@flowing/runtime';

/** A store opened for one `flowing run`, and how to let go of it (so the process can exit). */
export interface OpenedStore {
  store: SessionStore;
  /** True when sessions outlive this process (so `--session` can continue them). */
  durable: boolean;
  close(): Promise<void>;
}

/** Options of `openStore` beyond the store's name. */
export interface OpenStoreOptions {
  /**
   * Session lease TTL in ms (Redis), or how long a SQLite file's owner may go without a heartbeat (SQLite): how soon
   * another process takes over from one that stopped answering.
   */
  leaseTtlMs?: number;
  /** SQLite only: read without taking ownership of the file (another process may own it); writes are refused. */
  readOnly?: boolean;
  /** SQLite only: called once when another process took the file over from this one. */
  onFenced?: (error: Error) => void;
}

/**
 * Opens the store named by `--store`: `sqlite:PATH` (a file, created if missing), `redis://...` or `rediss://...`
 * (a Redis server), or nothing for the memory store. Store drivers are loaded only when asked for.
 */
export async function openStore(option: string | undefined, storeOptions: OpenStoreOptions = {}): Promise<OpenedStore> {
  if (option === undefined || option === 'memory') return { store: createMemoryStore(), durable: false, close: async () => {} };
  if (option.startsWith('sqlite:')) {
    const file = option.slice('sqlite:'.length);
    if (file === '') throw new FlowingError('RUN_BAD_STORE', '--store sqlite: needs a file, e.g. --store sqlite:.flowing/sessions.db');
    const { createSqliteStore } = await loadEntry<typeof import('@flowing/runtime/sqlite')>('@flowing/runtime/sqlite', 'better-sqlite3');
    const store = createSqliteStore({
      file,
      ...(storeOptions.readOnly ? { readOnly: true } : {}),
      ...(storeOptions.leaseTtlMs === undefined ? {} : { ownerTtlMs: storeOptions.leaseTtlMs }),
      ...(storeOptions.onFenced ? { onFenced: storeOptions.onFenced } : {}),
    });
    return { store, durable: true, close: () => store.close() };
  }
  if (option.startsWith('redis://') || option.startsWith('rediss://')) {
    const { createRedisStore } = await loadEntry<typeof import('@flowing/runtime/redis')>('@flowing/runtime/redis', 'ioredis');
    const store = createRedisStore({
      url: option,
      ...(storeOptions.leaseTtlMs === undefined ? {} : { lease: { ttlMs: storeOptions.leaseTtlMs } }),
    });
    return { store, durable: true, close: () => store.close() };
  }
  throw new FlowingError('RUN_BAD_STORE', `--store '${option}' is not a store: use sqlite:PATH, redis://HOST:PORT[/DB] or memory`);
}

async function loadEntry<T>(entry: string, driver: string): Promise<T> {
  try {
    return (await import(entry)) as T;
  } catch (error) {
    throw new FlowingError('RUN_BAD_STORE', `${entry} could not be loaded (is ${driver} installed?): ${(error as Error).message}`);
  }
}
