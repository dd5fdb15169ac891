import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, type RuntimeEvent, type SessionRecord, type SessionStore } from '@flowing/runtime';
import { createRedisStore } from '@flowing/runtime/redis';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import type { TestRedis } from './redis.ts';

export type StoreKind = 'memory' | 'sqlite' | 'redis';
export const STORE_KINDS: readonly StoreKind[] = ['memory', 'sqlite', 'redis'];

/**
 * One place sessions live: `open()` gives a store on it (a new connection for SQLite and Redis, as another process
 * would have; the same instance for memory). `remove()` closes every store it opened and deletes the data.
 */
export interface StoreBackend {
  kind: StoreKind;
  open(): SessionStore;
  remove(): Promise<void>;
  /** The SQLite file, or the Redis URL and key prefix. */
  where: { file?: string; url?: string; prefix?: string };
}

let backends = 0;

/** `sqliteReadPageSize` makes SQLite read logs in small pages, each a turn of the event loop apart (as long logs are). */
export async function createBackend(
  kind: StoreKind,
  redis?: TestRedis,
  options: { sqliteReadPageSize?: number } = {},
): Promise<StoreBackend> {
  const opened: SessionStore[] = [];
  const track = (store: SessionStore) => {
    opened.push(store);
    return store;
  };
  const closeAll = async () => {
    for (const store of opened) await store.close?.();
  };
  if (kind === 'memory') {
    const store = createMemoryStore();
    return { kind, where: {}, open: () => store, remove: async () => {} };
  }
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'flowing-sqlite-'));
    const file = join(dir, 'sessions.db');
    return {
      kind,
      where: { file },
      open: () =>
        track(createSqliteStore({ file, pollMs: 10, ...(options.sqliteReadPageSize ? { readPageSize: options.sqliteReadPageSize } : {}) })),
      remove: async () => {
        await closeAll();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  if (!redis) throw new Error('a Redis backend needs a running redis-server (startRedis())');
  const prefix = `t${process.pid}-${++backends}:`;
  return {
    kind,
    where: { url: redis.url, prefix },
    open: () => track(createRedisStore({ url: redis.url, prefix })),
    remove: closeAll,
  };
}

/** A stored record as the runtime writes it, for store-level tests. */
export function testRecord(sessionId: string, version: number, seq: number, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    sessionId,
    machineId: 'm',
    specHash: 'h',
    traceId: 't',
    status: 'waiting',
    version,
    seq,
    step: version,
    snapshot: { value: 'idle', context: { n: version } },
    usage: { promptTokens: 0, completionTokens: 0 },
    createdAt: 1_000,
    updatedAt: 1_000 + version,
    ...overrides,
  };
}

/** A frozen event of `sessionId` at `seq`. */
export function testEvent(sessionId: string, seq: number, data: Record<string, unknown> = { state: 'idle' }): RuntimeEvent {
  return Object.freeze({ seq, sessionId, traceId: 't', at: 1_000 + seq, type: 'state.changed', data: Object.freeze(data) });
}

/** Events `from..to` of a session. */
export function testEvents(sessionId: string, from: number, to: number): RuntimeEvent[] {
  const out: RuntimeEvent[] = [];
  for (let seq = from; seq <= to; seq++) out.push(testEvent(sessionId, seq, { state: 'idle', n: seq }));
  return out;
}
