import { join } from 'node:path';
import type { SessionStore } from '@flowing/runtime';
import { createRedisStore } from '@flowing/runtime/redis';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { SHORT_LEASE_TTL_MS } from './redis.ts';

/** The store a child process is pointed at: `sqlite:FILE` or `redis:URL#PREFIX`. */
export function openStore(spec: string): SessionStore {
  if (spec.startsWith('sqlite:')) return createSqliteStore({ file: spec.slice('sqlite:'.length) });
  const [url, prefix] = spec.slice('redis:'.length).split('#');
  // A short lease: a process that resumes after this one is SIGKILLed waits for the dead holder's lease to expire.
  return createRedisStore({ url: url!, prefix: prefix!, lease: { ttlMs: SHORT_LEASE_TTL_MS } });
}

/** A fresh place for run `n` of a test, as a child process names it (`spec`) and as the test opens it. */
export function storePlace(kind: 'sqlite' | 'redis', dir: string, redisUrl: string, n: number): { spec: string; open(): SessionStore } {
  const spec = kind === 'sqlite' ? `sqlite:${join(dir, `run-${n}.db`)}` : `redis:${redisUrl}#run-${n}:`;
  return { spec, open: () => openStore(spec) };
}
