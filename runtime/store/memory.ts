import type { RuntimeEvent } from '../events.ts';
import { checkCommit } from './commit-check.ts';
import { encodeCursor, isAfter, matches, newestFirst, planList, summarize } from './query.ts';
import type { CommitRequest, JournalEntry, SessionRecord, SessionStore } from './types.ts';

/** The whole content of a memory store, as `exportData` returns it and `createMemoryStore({ data })` takes it. */
export interface MemoryStoreData {
  records: Map<string, SessionRecord>;
  events: Map<string, readonly RuntimeEvent[]>;
  journal: Map<string, Map<string, JournalEntry>>;
}

/** The in-memory store plus `exportData`, which copies its content (used to simulate a crash after any write). */
export interface MemoryStore extends SessionStore {
  exportData(): MemoryStoreData;
}

/**
 * A `SessionStore` in process memory, for tests and embedding. Records and events are kept by reference and must be
 * treated as immutable (the runtime freezes events and never mutates a record it wrote or loaded).
 * @example createRuntime({ machines: [orderSupport], store: createMemoryStore(), llm: createScriptedProvider() })
 */
export function createMemoryStore(options: { data?: MemoryStoreData } = {}): MemoryStore {
  const data = options.data ? copy(options.data) : { records: new Map(), events: new Map(), journal: new Map() };
  return {
    name: 'memory',
    async load(sessionId) {
      return data.records.get(sessionId);
    },
    async commit(request: CommitRequest) {
      const { record, events, journal } = request;
      checkCommit(request, data.records.get(record.sessionId));
      const log = (data.events.get(record.sessionId) ?? []) as RuntimeEvent[];
      data.records.set(record.sessionId, record);
      if (events.length > 0) {
        if (log.length === 0) data.events.set(record.sessionId, events.slice());
        else for (const e of events) log.push(e);
      }
      if (journal.length > 0) {
        let entries = data.journal.get(record.sessionId);
        if (!entries) data.journal.set(record.sessionId, (entries = new Map()));
        for (const entry of journal) entries.set(entry.key, entry);
      }
    },
    async readEvents(sessionId, afterSeq = 0, limit = Number.POSITIVE_INFINITY) {
      const log = data.events.get(sessionId) ?? [];
      // seq n sits at index n - 1 because the log is gapless from 1.
      return log.slice(Math.max(0, afterSeq), Math.max(0, afterSeq) + limit);
    },
    async readJournal(sessionId) {
      return [...(data.journal.get(sessionId)?.values() ?? [])];
    },
    async listSessions(query) {
      const plan = planList(query);
      const sorted = [...data.records.values()]
        .filter((r) => isAfter(r, plan.after) && matches(plan, r.machineId, r.status))
        .sort(newestFirst);
      const page = sorted.slice(0, plan.limit);
      const last = page[page.length - 1];
      return { sessions: page.map(summarize), ...(sorted.length > plan.limit && last ? { nextCursor: encodeCursor(last) } : {}) };
    },
    async durability() {
      return { summary: 'memory store: sessions live in this process only and are lost when it ends' };
    },
    exportData() {
      return copy(data);
    },
  };
}

function copy(data: MemoryStoreData): MemoryStoreData {
  return {
    records: new Map(data.records),
    events: new Map([...data.events].map(([k, v]) => [k, v.slice()])),
    journal: new Map([...data.journal].map(([k, v]) => [k, new Map(v)])),
  };
}
