/**
 * Stable codes of the session stores. `STORE_CONFLICT` is shared with the runtime's table (a session writer sees it);
 * the others come from a store alone.
 */
export const STORE_ERROR_CODES = {
  STORE_CONFLICT: 'The stored session changed since it was read (optimistic version check); reload and retry.',
  STORE_FENCED:
    "The writer no longer holds the session's lease or the SQLite file's ownership (another process took over); the write is refused and never retried.",
  FLOW_STORE_CORRUPT: 'A stored session cannot be read back (a damaged row or entry); that session is refused, others load.',
  STORE_BAD_CURSOR: 'The paging cursor was not produced by this store; start again without a cursor.',
  STORE_BAD_QUERY: 'A listing filter or page size is out of range.',
  STORE_BAD_OPTIONS: 'A store option is invalid (the message names it).',
  STORE_BAD_WRITE: 'A commit is malformed (events do not continue the log, or the record does not match the request).',
  STORE_SCHEMA_TOO_NEW: 'The store was written by a newer version of Flowing; upgrade before opening it.',
  STORE_UNAVAILABLE: 'The store cannot be reached or opened (file, permissions, connection).',
  STORE_CLOSED: 'The store was closed; create a new one.',
  STORE_IN_USE:
    'Another live process owns the SQLite file for writing (the message names it); stop it, or open the file read-only (`readOnly: true`).',
  STORE_READ_ONLY: 'The store was opened read-only; writes go through the process that owns the file.',
} as const;

export type StoreErrorCode = keyof typeof STORE_ERROR_CODES;
