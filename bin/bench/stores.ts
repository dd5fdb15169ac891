import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, type CommitRequest, type SessionStore } from '@flowing/runtime';

/** A durable store for the benchmark, and how to take it down. */
export interface BenchStore {
  store: SessionStore;
  close(): Promise<void>;
}

function firstLine(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

/** SQLite in a temporary file, with the store's defaults (WAL, synchronous=FULL); the reason when it cannot be used. */
export async function benchSqlite(): Promise<BenchStore | string> {
  let createSqliteStore: typeof import('@flowing/runtime/sqlite').createSqliteStore;
  try {
    ({ createSqliteStore } = await import('@flowing/runtime/sqlite'));
  } catch (error) {
    return `better-sqlite3 is not installed (${firstLine(error)})`;
  }
  const dir = mkdtempSync(join(tmpdir(), 'flowing-bench-'));
  const store = createSqliteStore({ file: join(dir, 'sessions.db') });
  return {
    store,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The Redis store on `url` under a prefix of this process; the reason when ioredis is missing. */
export async function benchRedis(url: string): Promise<BenchStore | string> {
  let createRedisStore: typeof import('@flowing/runtime/redis').createRedisStore;
  try {
    ({ createRedisStore } = await import('@flowing/runtime/redis'));
  } catch (error) {
    return `ioredis is not installed (${firstLine(error)})`;
  }
  const store = createRedisStore({ url, prefix: `bench-${process.pid}:` });
  return { store, close: () => store.close() };
}

/** The commits of one session: `session` runs it on a memory store that keeps each commit asked of it. */
export async function captureCommits(session: (store: SessionStore) => Promise<unknown>): Promise<CommitRequest[]> {
  const memory = createMemoryStore();
  const commits: CommitRequest[] = [];
  await session({
    ...memory,
    commit: (request) => {
      commits.push(request);
      return memory.commit(request);
    },
  });
  return commits;
}

/** A captured commit, made for another session id. */
export function commitAs(commit: CommitRequest, sessionId: string): CommitRequest {
  return { ...commit, record: { ...commit.record, sessionId }, events: commit.events.map((event) => ({ ...event, sessionId })) };
}
