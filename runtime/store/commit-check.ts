import { storeError } from './errors.ts';
import type { CommitRequest } from './types.ts';

/**
 * Checks what a commit says about itself, before any store touches its data: the record is the next version, its
 * events are this session's, contiguous, and end at the record's seq. `storedSeq` is the seq of the stored record
 * (0 for a new session); the version check itself is the store's (`STORE_CONFLICT`).
 */
export function checkCommit({ expectedVersion, record, events }: CommitRequest, storedSeq: number): void {
  const id = record.sessionId;
  if (typeof id !== 'string' || id.length === 0) throw storeError('STORE_BAD_WRITE', 'the record has no sessionId');
  if (!Number.isInteger(expectedVersion) || expectedVersion < 0 || record.version !== expectedVersion + 1) {
    throw storeError('STORE_BAD_WRITE', `the record of session '${id}' has version ${record.version}; a commit expecting ${expectedVersion} writes version ${expectedVersion + 1}`, { sessionId: id });
  }
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.sessionId !== id) throw storeError('STORE_BAD_WRITE', `event seq ${event.seq} belongs to session '${event.sessionId}', not '${id}'`, { sessionId: id });
    if (event.seq !== storedSeq + i + 1) {
      throw storeError('STORE_CONFLICT', `event seq ${event.seq} of session '${id}' does not follow ${storedSeq + i}`, { sessionId: id });
    }
  }
  if (record.seq !== storedSeq + events.length) {
    throw storeError('STORE_BAD_WRITE', `the record of session '${id}' says seq ${record.seq}, but the log would end at ${storedSeq + events.length}`, { sessionId: id });
  }
}
