import { FlowingError } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';
import type { SessionRecord, SessionStore } from '../store/types.ts';

/** A stored session's record and its whole log, or SESSION_NOT_FOUND. */
export async function readSessionLog(
  store: SessionStore,
  sessionId: string,
): Promise<{ record: SessionRecord; events: readonly RuntimeEvent[] }> {
  const record = await store.load(sessionId);
  if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${store.name} store`);
  // Read up to the record's seq only: a commit landing meanwhile cannot make the log disagree with the record.
  const events = (await store.readEvents(sessionId, 0)).filter((event) => event.seq <= record.seq);
  return { record, events };
}
