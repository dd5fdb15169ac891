import { createMemoryStore, toFlowError } from '@flowing/runtime';
import { openStore, type OpenedStore, type OpenStoreOptions } from '../run/store-option.ts';

/** Where `flowing serve` keeps sessions when `--store` is not given. */
export const DEFAULT_SERVE_STORE = 'sqlite:.flowing/sessions.db';

/**
 * Opens `--store` for `serve` and `sessions`. Without one: SQLite in `.flowing/sessions.db`, or, when the SQLite
 * driver cannot be loaded, the memory store with a warning (sessions then end with the process). A file that cannot
 * be opened (in use by another process, damaged, unreadable) is an error, never a silent switch to memory.
 */
export async function openServeStore(
  option: string | undefined,
  warn: (line: string) => void,
  storeOptions: OpenStoreOptions = {},
): Promise<OpenedStore & { description: string }> {
  if (option !== undefined) return { ...(await openStore(option, storeOptions)), description: option };
  try {
    return { ...(await openStore(DEFAULT_SERVE_STORE, storeOptions)), description: DEFAULT_SERVE_STORE };
  } catch (error) {
    if (toFlowError(error).code !== 'RUN_BAD_STORE') throw error;
    warn(`warning: SQLite is not available (${(error as Error).message}); sessions are kept in memory and lost when the server stops`);
    return { store: createMemoryStore(), durable: false, close: async () => {}, description: 'memory' };
  }
}
