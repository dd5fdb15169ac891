import { storeError } from './errors.ts';
import type { CommitRequest } from './types.ts';

/**
 * Checks what a commit says about itself, before a store touches its data: the record is the next version, and its
 * events are this session's, contiguous, and end at the record's seq. Refused with `STORE_BAD_WRITE`.
 */
export function checkCommitShape({ expectedVersion, record, events }: CommitRequest): void {
  const id = record.sessionId;
  if (typeof id !== 'string' || id.length === 0) throw storeError('STORE_BAD_WRITE', 'the record has no sessionId');
  if (!Number.isInteger(expectedVersion) || expectedVersion < 0 || record.version !== expectedVersion + 1) {
    throw storeError('STORE_BAD_WRITE', `the record of session '${id}' has version ${record.version}; a commit expecting ${expectedVersion} writes version ${expectedVersion + 1}`, { sessionId: id });
  }
  const first = record.seq - events.length + 1;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.sessionId !== id) throw storeError('STORE_BAD_WRITE', `event seq ${event.seq} belongs to session '${event.sessionId}', not '${id}'`, { sessionId: id });
    if (event.seq !== first + i) {
      throw storeError('STORE_BAD_WRITE', `the record of session '${id}' says seq ${record.seq}, but its events are not the ${events.length} seqs ending there (found ${event.seq} at position ${i + 1})`, { sessionId: id });
    }
  }
}

/**
 * `checkCommitShape`, then that the events continue the stored log, whose last seq is `storedSeq` (0 for a new
 * session); a log that moved on is `STORE_CONFLICT`, like a stale version.
 */
export function checkCommit(request: CommitRequest, storedSeq: number): void {
  checkCommitShape(request);
  const { record, events } = request;
  if (record.seq - events.length !== storedSeq) {
    throw storeError('STORE_CONFLICT', `the events of session '${record.sessionId}' start after seq ${record.seq - events.length}, but the stored log ends at ${storedSeq}`, { sessionId: record.sessionId });
  }
}
