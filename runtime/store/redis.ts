import { Redis, type RedisOptions } from 'ioredis';
import { encodeSealed, unsealEvent, unsealJournal, unsealRecord } from './codec.ts';
import { checkCommitShape } from './commit-check.ts';
import { storeError } from './errors.ts';
import { encodeCursor, planList } from './query.ts';
import { channelStreamKey, DEFAULT_CHANNEL_STREAM_MAX_LEN, outgoingMessages, RedisChannelFeed } from './redis/channels.ts';
import { StreamFeed } from './redis/feed.ts';
import { createRedisLeases, DEFAULT_LEASE_TTL_MS } from './redis/leases.ts';
import { COMMIT, LIST, runScript } from './redis/scripts.ts';
import type {
  ChannelFeed,
  SessionLeases,
  SessionPage,
  SessionQuery,
  SessionStatus,
  SessionStore,
  SessionSummary,
  StoreDurability,
} from './types.ts';

/** Key prefix when none is given. */
export const DEFAULT_REDIS_PREFIX = 'flowing:';

export interface RedisStoreOptions {
  /** `redis://host:port/db`; ignored when `redis` is given. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** A client of your own; the store uses it and duplicates it for the live feed, and `close` leaves it open. */
  redis?: Redis;
  /**
   * Options for the client the store creates from `url`. By default commands never wait for an unreachable Redis to
   * come back (STORE_UNAVAILABLE in about half a second instead of queueing behind a dead connection), and a command
   * a connected Redis does not answer within `commandTimeout` (10 s) fails the same way.
   */
  redisOptions?: RedisOptions;
  /** Prefix of every key the store writes (default `flowing:`), so several apps can share one Redis. */
  prefix?: string;
  /** Seconds a finished (done, error, cancelled) session is kept before Redis expires it; default: kept forever. */
  finishedTtlSeconds?: number;
  /** Most sessions one `listSessions` call looks at before it returns a (possibly short) page with a cursor. */
  listScanBudget?: number;
  /**
   * Session leases (one process steps a session at a time; commits carry a fencing token): `ttlMs` is how long a
   * lease lives unless renewed (default 10 000), so how soon another process takes over a dead one's sessions.
   */
  lease?: { ttlMs?: number };
  /**
   * Channel messages between processes: `claimIdleMs` is how long a message stays with a receiving process that does
   * not acknowledge it (it died) before another one takes it (default: the lease TTL); `maxLen` bounds each channel
   * stream (approximately; default 100 000 messages).
   */
  channels?: { claimIdleMs?: number; maxLen?: number };
}

/** How durable an acknowledged commit is on this Redis, read from its configuration. */
export interface RedisDurability extends StoreDurability {
  appendonly: boolean;
  appendfsync?: string;
  /** Without an append-only file: whether RDB snapshots are taken (`save` is not empty). */
  snapshots?: boolean;
}

export interface RedisStore extends SessionStore {
  readonly prefix: string;
  readonly leases: SessionLeases;
  readonly channels: ChannelFeed;
  durability(): Promise<RedisDurability>;
  close(): Promise<void>;
}

const FINISHED: ReadonlySet<SessionStatus> = new Set(['done', 'error', 'cancelled']);

/**
 * How the store's own client treats an unreachable Redis: a command issued while disconnected waits for at most two
 * reconnection attempts (every 25-100 ms), then fails and leaves the queue, so requests answer 503 in a few hundred
 * ms and none piles up or runs late on reconnect; one dropped connection alone (the server restarted, a CLIENT KILL)
 * is retried on the next one. A Redis that is connected but does not answer (paused, hung) fails a command after
 * 10 s: a shorter timeout fails commands that merely wait behind many others on a busy process (measured: 1,000
 * concurrent events over two processes saw replies later than 2 s), and `/readyz` has its own 800 ms bound.
 */
const UNAVAILABLE_FAST: RedisOptions = {
  commandTimeout: 10_000,
  maxRetriesPerRequest: 1,
  retryStrategy: (times) => Math.min(times * 25, 100),
  connectTimeout: 5_000,
};

/**
 * A store several runtime processes share: each commit is one Lua script (version compare-and-set, events appended
 * to the session's stream with seq as entry id, journal, record, index); `follow` reads the streams from the last
 * seen id with XREAD BLOCK on a dedicated connection.
 * @example createRuntime({ machines, store: createRedisStore({ url: process.env.REDIS_URL, prefix: 'support:' }) })
 */
export function createRedisStore(options: RedisStoreOptions = {}): RedisStore {
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const ttl = options.finishedTtlSeconds ?? 0;
  if (!Number.isInteger(ttl) || ttl < 0)
    throw storeError('STORE_BAD_OPTIONS', `finishedTtlSeconds must be a whole number of seconds ≥ 0, got ${String(ttl)}`);
  const budget = options.listScanBudget ?? 1_000;
  const leaseTtlMs = options.lease?.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  if (!Number.isInteger(leaseTtlMs) || leaseTtlMs < 100)
    throw storeError('STORE_BAD_OPTIONS', `lease.ttlMs must be a whole number of milliseconds ≥ 100, got ${String(leaseTtlMs)}`);
  if (options.redis?.options.keyPrefix) {
    // ioredis would prefix the script's KEYS but not the key names the listing script builds itself.
    throw storeError(
      'STORE_BAD_OPTIONS',
      `the given ioredis client has keyPrefix '${options.redis.options.keyPrefix}'; pass a client without one and use the store's prefix option`,
    );
  }
  const claimIdleMs = options.channels?.claimIdleMs ?? leaseTtlMs;
  const channelMaxLen = options.channels?.maxLen ?? DEFAULT_CHANNEL_STREAM_MAX_LEN;
  if (!Number.isInteger(claimIdleMs) || claimIdleMs < 100)
    throw storeError('STORE_BAD_OPTIONS', `channels.claimIdleMs must be a whole number of milliseconds ≥ 100, got ${String(claimIdleMs)}`);
  if (!Number.isInteger(channelMaxLen) || channelMaxLen < 1)
    throw storeError('STORE_BAD_OPTIONS', `channels.maxLen must be a whole number ≥ 1, got ${String(channelMaxLen)}`);
  const owned = !options.redis;
  const redis = options.redis ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', { ...UNAVAILABLE_FAST, ...options.redisOptions });
  if (owned) redis.on('error', () => {}); // each command reports its own failure as STORE_UNAVAILABLE
  // The hash tag keeps one session's keys in one slot, should the keys ever live on a cluster.
  const key = (sessionId: string, kind: 'r' | 'e' | 'j' | 'lease') => `${prefix}{${sessionId}}:${kind}`;
  const indexKey = (machineId?: string) => (machineId === undefined ? `${prefix}index` : `${prefix}index:m:${machineId}`);
  const feed = new StreamFeed({
    redis,
    streamKey: (id) => key(id, 'e'),
    decode: (id, entryId, fields) => unsealEvent(fieldE(fields), id, Number.parseInt(entryId, 10)),
  });
  const channels = new RedisChannelFeed({
    redis,
    prefix,
    claimIdleMs,
    warn: (text) => process.emitWarning(text, { code: 'CHANNEL_MESSAGE_UNREADABLE' }),
  });
  let closed = false;
  const runningKey = `${prefix}running`;

  async function call<T>(what: string, fn: () => Promise<T>, sessionId?: string): Promise<T> {
    if (closed) throw storeError('STORE_CLOSED', 'the Redis store was closed');
    try {
      return await fn();
    } catch (error) {
      if (
        error &&
        typeof error === 'object' &&
        'code' in error &&
        typeof (error as { code: unknown }).code === 'string' &&
        /^(STORE_|FLOW_STORE_)/.test((error as { code: string }).code)
      )
        throw error;
      throw storeError('STORE_UNAVAILABLE', `Redis ${what} failed: ${unavailableReason(redis, error)}`, {
        cause: error,
        ...(sessionId ? { sessionId } : {}),
      });
    }
  }

  const leases = createRedisLeases({ redis, key, tagPrefix: `${prefix}{`, runningKey, ttlMs: leaseTtlMs, call });

  return {
    name: 'redis',
    prefix,
    leases,
    channels,
    async load(sessionId) {
      const sealed = await call('load', () => redis.hget(key(sessionId, 'r'), 'r'), sessionId);
      return sealed === null ? undefined : unsealRecord(sealed, sessionId);
    },
    async commit(request) {
      const { expectedVersion, record, events, journal } = request;
      const id = record.sessionId;
      checkCommitShape(request);
      const args: Array<string | number> = [
        expectedVersion,
        record.version,
        encodeSealed(record),
        record.status,
        record.machineId,
        record.createdAt,
        record.approval && !record.approval.decision ? 1 : 0,
        record.seq,
        ttl,
        FINISHED.has(record.status) ? 1 : 0,
        id,
        record.updatedAt,
        request.fence ?? 0,
        events.length,
      ];
      const outbox = outgoingMessages(id, events);
      args.push(outbox.length, channelMaxLen);
      for (const event of events) args.push(encodeSealed(event));
      for (const message of outbox) args.push(JSON.stringify(message));
      for (const entry of journal) args.push(entry.key, encodeSealed(entry));
      const keys = [key(id, 'r'), key(id, 'e'), key(id, 'j'), indexKey(), indexKey(record.machineId), key(id, 'lease'), runningKey];
      for (const message of outbox) keys.push(channelStreamKey(prefix, message.channel));
      const reply = (await call('commit', () => runScript(redis, COMMIT, keys, args), id)) as [number, number?];
      if (reply[0] === 0)
        throw storeError(
          'STORE_CONFLICT',
          `session ${id} is at version ${reply[1]}, the write expected ${expectedVersion}; reload and retry`,
          { sessionId: id },
        );
      if (reply[0] === 3) {
        const why = request.fence
          ? `its lease token ${request.fence} is not the latest (${reply[1]}): another process took the session over`
          : `another process holds its lease (token ${reply[1]})`;
        throw storeError('STORE_FENCED', `write to session ${id} refused: ${why}`, { sessionId: id });
      }
      if (reply[0] === 2)
        throw storeError('STORE_CONFLICT', `event seq ${events[0]?.seq ?? record.seq} of session ${id} does not follow ${reply[1]}`, {
          sessionId: id,
        });
    },
    async readEvents(sessionId, afterSeq = 0, limit = Number.POSITIVE_INFINITY) {
      const after = Math.max(0, Math.floor(afterSeq) || 0);
      const count = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : undefined;
      if (count === 0) return [];
      const start = after === 0 ? '-' : `(${after}-0`;
      const entries = await call(
        'readEvents',
        () =>
          count === undefined
            ? redis.xrange(key(sessionId, 'e'), start, '+')
            : redis.xrange(key(sessionId, 'e'), start, '+', 'COUNT', count),
        sessionId,
      );
      return entries.map(([entryId, fields]) => unsealEvent(fieldE(fields), sessionId, Number.parseInt(entryId, 10)));
    },
    async readJournal(sessionId) {
      const entries = await call('readJournal', () => redis.hgetall(key(sessionId, 'j')), sessionId);
      return Object.keys(entries)
        .sort()
        .map((k) => unsealJournal(entries[k], sessionId, k));
    },
    async listSessions(query?: SessionQuery): Promise<SessionPage> {
      const plan = planList(query);
      const args: Array<string | number> = [
        `${prefix}{`,
        '}:r',
        plan.after ? String(plan.after.createdAt) : '+inf',
        plan.after?.sessionId ?? '',
        plan.limit + 1,
        Math.max(budget, plan.limit + 1),
        ...(plan.statuses ?? []),
      ];
      const reply = (await call('listSessions', () => runScript(redis, LIST, [indexKey(plan.machineId)], args))) as Array<string | number>;
      const [done, lastScore, lastMember] = reply;
      const found: SessionSummary[] = [];
      for (let i = 3; i + 7 < reply.length; i += 8) {
        const [id, status, machineId, version, seq, createdAt, awaiting, updatedAt] = reply.slice(i, i + 8).map(String) as string[];
        found.push({
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
      const sessions = found.slice(0, plan.limit);
      if (found.length > plan.limit) return { sessions, nextCursor: encodeCursor(sessions[sessions.length - 1]!) };
      // The scan budget ran out before the end of the index: continue after the last session looked at.
      if (Number(done) !== 1 && lastMember !== '')
        return { sessions, nextCursor: encodeCursor({ createdAt: Number(lastScore), sessionId: String(lastMember) }) };
      return { sessions };
    },
    follow(sessionId, afterSeq, listener) {
      if (closed) throw storeError('STORE_CLOSED', 'the Redis store was closed');
      return feed.follow(sessionId, afterSeq, listener);
    },
    async durability() {
      const read = async (name: string) => {
        const reply = (await call('CONFIG GET', () => redis.config('GET', name))) as unknown;
        const flat = Array.isArray(reply) ? reply.map(String) : Object.entries(reply as Record<string, string>).flat();
        return flat[1];
      };
      let appendonly: boolean;
      let appendfsync: string | undefined;
      let save: string | undefined;
      try {
        appendonly = (await read('appendonly')) === 'yes';
        appendfsync = appendonly ? await read('appendfsync') : undefined;
        save = appendonly ? undefined : ((await read('save')) ?? '').trim();
      } catch (error) {
        // Managed Redis services often refuse CONFIG; say so rather than guess.
        if ((error as { code?: string }).code === 'STORE_CLOSED') throw error;
        return {
          appendonly: false,
          summary: "Redis durability: unknown (CONFIG GET refused); check the server's appendonly and appendfsync settings",
        };
      }
      if (appendonly) return { appendonly, appendfsync, summary: `Redis durability: append-only file, fsync ${appendfsync}` };
      // `save ''` turns RDB snapshots off: with no append-only file either, a Redis restart loses every session.
      const snapshots = save !== '';
      const summary = snapshots
        ? 'Redis durability: snapshot only'
        : 'Redis durability: no persistence (no RDB snapshots, no append-only file: a Redis restart loses every session)';
      return { appendonly, snapshots, summary };
    },
    async close() {
      if (closed) return;
      closed = true;
      await channels.close();
      await feed.close();
      if (owned) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** The `e` field of a stream entry (`['e', value]`). */
function fieldE(fields: unknown): unknown {
  if (!Array.isArray(fields)) return undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'e') return fields[i + 1];
  return undefined;
}

/**
 * Why a Redis command failed, in the store's words: the driver's own messages ("Reached the max retries per request
 * limit", "Command timed out") name its internals, not what a client can act on. A reply error of the server
 * itself (OOM, READONLY, ...) is the server's text and is kept.
 */
function unavailableReason(redis: Redis, error: unknown): string {
  const where = `Redis at ${redis.options.host ?? '127.0.0.1'}:${redis.options.port ?? 6379}`;
  if (error instanceof Error && error.name === 'ReplyError') return `${where} answered: ${error.message.slice(0, 200)}`;
  const message = error instanceof Error ? error.message : String(error);
  if (/timed out/i.test(message)) return `${where} did not answer within ${redis.options.commandTimeout ?? 'the command timeout'} ms`;
  return `${where} is not reachable (${redis.status === 'ready' ? 'the connection failed' : `connection ${redis.status}`}); retry once it is back`;
}
