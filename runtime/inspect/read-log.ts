import { FlowingError } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';
import type { SessionRecord, SessionStore } from '../store/types.ts';

/** Events read per query when a log is read page by page. */
export const LOG_PAGE_SIZE = 256;

/** A stored session's record, or SESSION_NOT_FOUND. */
export async function loadRecord(store: SessionStore, sessionId: string): Promise<SessionRecord> {
  const record = await store.load(sessionId);
  if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${store.name} store`);
  return record;
}

/**
 * A stored log one page at a time, events `after < seq <= upTo` in order: what a reader holds at once is one page,
 * however long the log. The next page is read only when the consumer asks for it.
 */
export async function* eventPages(
  store: SessionStore,
  sessionId: string,
  range: { after?: number; upTo: number; pageSize?: number },
): AsyncGenerator<readonly RuntimeEvent[]> {
  const pageSize = range.pageSize ?? LOG_PAGE_SIZE;
  let after = range.after ?? 0;
  while (after < range.upTo) {
    const page = (await store.readEvents(sessionId, after, Math.min(pageSize, range.upTo - after))).filter((e) => e.seq <= range.upTo);
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.seq;
  }
}

/** A stored session's record and its whole log, or SESSION_NOT_FOUND (for readers that need it all at once). */
export async function readSessionLog(
  store: SessionStore,
  sessionId: string,
): Promise<{ record: SessionRecord; events: readonly RuntimeEvent[] }> {
  const record = await loadRecord(store, sessionId);
  // Read up to the record's seq only: a commit landing meanwhile cannot make the log disagree with the record.
  const events = (await store.readEvents(sessionId, 0)).filter((event) => event.seq <= record.seq);
  return { record, events };
}
