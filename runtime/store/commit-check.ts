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
    throw storeError(
      'STORE_BAD_WRITE',
      `the record of session '${id}' has version ${record.version}; a commit expecting ${expectedVersion} writes version ${expectedVersion + 1}`,
      { sessionId: id },
    );
  }
  const first = record.seq - events.length + 1;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.sessionId !== id)
      throw storeError('STORE_BAD_WRITE', `event seq ${event.seq} belongs to session '${event.sessionId}', not '${id}'`, { sessionId: id });
    if (event.seq !== first + i) {
      throw storeError(
        'STORE_BAD_WRITE',
        `the record of session '${id}' says seq ${record.seq}, but its events are not the ${events.length} seqs ending there (found ${event.seq} at position ${i + 1})`,
        { sessionId: id },
      );
    }
  }
}

/**
 * That the stored session (undefined for none) is at the version the commit expects, `checkCommitShape`, and that
 * the events continue the stored log: a stale version, or a log that moved on, is `STORE_CONFLICT`.
 */
export function checkCommit(request: CommitRequest, stored: { version: number; seq: number } | undefined): void {
  const { expectedVersion, record, events } = request;
  const current = stored?.version ?? 0;
  if (current !== expectedVersion) {
    throw storeError(
      'STORE_CONFLICT',
      `session ${record.sessionId} is at version ${current}, the write expected ${expectedVersion}; reload and retry`,
      { sessionId: record.sessionId },
    );
  }
  checkCommitShape(request);
  const storedSeq = stored?.seq ?? 0;
  if (record.seq - events.length !== storedSeq) {
    throw storeError(
      'STORE_CONFLICT',
      `the events of session '${record.sessionId}' start after seq ${record.seq - events.length}, but the stored log ends at ${storedSeq}`,
      { sessionId: record.sessionId },
    );
  }
}
