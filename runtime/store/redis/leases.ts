import type { Redis } from 'ioredis';
import { FlowingError } from '../../errors.ts';
import type { LeaseAttempt, SessionLeases, SessionStatus, SessionSummary } from '../types.ts';
import { ACQUIRE, ORPHANS, RELEASE, RENEW } from './lease-scripts.ts';
import { runScript } from './scripts.ts';

/** Lease TTL when none is given: a dead holder's sessions are taken over within this plus the scan interval. */
export const DEFAULT_LEASE_TTL_MS = 10_000;

export interface RedisLeasesOptions {
  redis: Redis;
  /** Key of one session's hash of a kind (`r` record, `lease`). */
  key(sessionId: string, kind: 'r' | 'lease'): string;
  /** `<prefix>{`: what the orphan scan puts before a session id to build its keys. */
  tagPrefix: string;
  runningKey: string;
  ttlMs: number;
  /** Runs a Redis call, mapping failures to the store's codes. */
  call<T>(what: string, fn: () => Promise<T>, sessionId?: string): Promise<T>;
}

/**
 * Session leases on Redis: a hash `{o: owner, t: token}` with a TTL next to the session's keys (same hash tag, so
 * the commit script reads it in the same slot), and a fencing counter in the record hash that only grows.
 */
export function createRedisLeases(options: RedisLeasesOptions): SessionLeases {
  const { redis, key, call, ttlMs } = options;
  // A token counter written for a session whose creation never committed expires after this.
  const orphanCounterMs = Math.max(ttlMs * 10, 60_000);
  return {
    ttlMs,
    async acquire(sessionId, owner, acquireOptions = {}): Promise<LeaseAttempt> {
      const reply = (await call(
        'lease acquire',
        () =>
          runScript(
            redis,
            ACQUIRE,
            [key(sessionId, 'lease'), key(sessionId, 'r')],
            [owner, ttlMs, acquireOptions.create ? 1 : 0, orphanCounterMs],
          ),
        sessionId,
      )) as [number, number?, string?];
      if (reply[0] === 1) return { granted: true, token: Number(reply[1]) };
      if (reply[0] === 2) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the redis store`);
      // PTTL is -1 for a lease without expiry (never written so) and -2 when it vanished meanwhile: retry soon.
      const left = Number(reply[1]);
      return { granted: false, holder: String(reply[2]), retryInMs: left > 0 ? left : 1 };
    },
    async renew(sessionId, owner, token) {
      const reply = await call('lease renew', () => runScript(redis, RENEW, [key(sessionId, 'lease')], [owner, token, ttlMs]), sessionId);
      return Number(reply) === 1;
    },
    async release(sessionId, token) {
      await call('lease release', () => runScript(redis, RELEASE, [key(sessionId, 'lease')], [token]), sessionId);
    },
    async orphans(cursor = '0') {
      if (!/^\d+$/.test(cursor)) throw new FlowingError('STORE_BAD_CURSOR', 'the orphan scan cursor was not produced by this store');
      const reply = (await call('orphan scan', () =>
        runScript(redis, ORPHANS, [options.runningKey], [options.tagPrefix, cursor, 200]),
      )) as Array<string | number>;
      const sessions: SessionSummary[] = [];
      for (let i = 1; i + 7 < reply.length; i += 8) {
        const [id, status, machineId, version, seq, createdAt, awaiting, updatedAt] = reply.slice(i, i + 8).map(String) as string[];
        sessions.push({
          sessionId: id!,
          machineId: machineId!,
          status: status as SessionStatus,
          version: Number(version),
          seq: Number(seq),
          createdAt: Number(createdAt),
          updatedAt: Number(updatedAt),
          awaitingApproval: awaiting === '1',
        });
      }
      const next = String(reply[0]);
      return next === '0' ? { sessions } : { sessions, nextCursor: next };
    },
  };
}
