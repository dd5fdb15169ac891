import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRedisStore, type RedisStore } from '@flowing/runtime/redis';
import { REPO_DIR } from '../helpers/project.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { testEvent, testEvents, testRecord } from '../helpers/stores.ts';

let server: TestRedis;
let admin: Redis;
const stores: RedisStore[] = [];
let prefixes = 0;
const open = (options: Parameters<typeof createRedisStore>[0] = {}) => {
  const store = createRedisStore({ url: server.url, prefix: `r${++prefixes}:`, ...options });
  stores.push(store);
  return store;
};
beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url);
});
afterAll(async () => {
  for (const store of stores) await store.close();
  admin?.disconnect();
  await server?.stop();
});

/** Waits until the feed has delivered `n` events to `seen` (vi.waitFor, re-checked every 5 ms). */
const delivered = (seen: number[], n: number, timeout = 3_000) =>
  vi.waitFor(() => expect(seen.length).toBeGreaterThanOrEqual(n), { timeout, interval: 5 });

/** Redis clients named `name`, from CLIENT LIST. */
async function clientIds(name: string): Promise<string[]> {
  const list = String(await admin.client('LIST'));
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${name} `))
    .map((line) => /id=(\d+)/.exec(line)![1]!);
}

describe('Redis store: commits', () => {
  it('C3 (static): no WATCH anywhere in the runtime; compare-and-set is a Lua script', async () => {
    const offenders: string[] = [];
    const walk = async (folder: string): Promise<void> => {
      for (const entry of await readdir(folder, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === 'dist') continue;
        const path = join(folder, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (/\.(ts|js|lua)$/.test(entry.name) && /\.watch\s*\(|['"`]WATCH\b|\bWATCH\s+[\w{]/.test(await readFile(path, 'utf8')))
          offenders.push(path);
      }
    };
    await walk(join(REPO_DIR, 'runtime'));
    await walk(join(REPO_DIR, 'bin'));
    expect(offenders).toEqual([]);
  });

  it('sends a commit as one EVALSHA and nothing else (no MULTI, no WATCH, no read before the write)', async () => {
    const store = open({ redisOptions: { connectionName: 'flowing-one-script' } });
    await store.commit({ expectedVersion: 0, record: testRecord('mon', 1, 1), events: [testEvent('mon', 1)], journal: [] });
    const monitor = await admin.duplicate().monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      seen.push(args);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await store.commit({
      expectedVersion: 1,
      record: testRecord('mon', 2, 3),
      events: testEvents('mon', 2, 3),
      journal: [{ key: 'k@2', kind: 'tool', name: 't', idempotent: false, startedAt: 2 }],
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    monitor.disconnect();
    // MONITOR shows a script's own calls as well; the client sent only the EVALSHA.
    const fromClient = seen.filter(
      (args) => !['xadd', 'hset', 'hget', 'expire', 'persist', 'zadd', 'sadd', 'srem'].includes(args[0]!.toLowerCase()),
    );
    expect(fromClient.map((args) => args[0]!.toLowerCase())).toEqual(['evalsha']);
    expect(seen.some((args) => ['watch', 'multi', 'exec'].includes(args[0]!.toLowerCase()))).toBe(false);
  });

  it('C3: killing the connection at random moments of 200 commits loses no update and appends nothing twice', async () => {
    const store = open({ redisOptions: { connectionName: 'flowing-c3', retryStrategy: () => 5 } });
    let version = 0;
    let kills = 0;
    let failures = 0;
    for (let i = 1; i <= 200; i++) {
      const commit = store.commit({
        expectedVersion: i - 1,
        record: testRecord('c3', i, i * 20),
        events: testEvents('c3', i * 20 - 19, i * 20),
        journal: [],
      });
      const kill = (async () => {
        // Sent right behind the commit, the kill often lands while the script runs: applied, reply lost.
        if (i % 2 === 1) await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
        kills += Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      })();
      const [result] = await Promise.allSettled([commit, kill]);
      if (result.status === 'rejected') {
        failures++;
        expect(result.reason).toMatchObject({ code: expect.stringMatching(/^STORE_(UNAVAILABLE|CONFLICT)$/) });
        // What the runtime does after an unclear write: read the truth back; write again only if it is not there.
        const stored = await store.load('c3');
        if ((stored?.version ?? 0) === i - 1) {
          await store.commit({
            expectedVersion: i - 1,
            record: testRecord('c3', i, i * 20),
            events: testEvents('c3', i * 20 - 19, i * 20),
            journal: [],
          });
        }
      }
      version = (await store.load('c3'))!.version;
      expect(version).toBe(i);
    }
    expect(kills).toBeGreaterThan(100);
    const log = await store.readEvents('c3');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 4_000 }, (_, i) => i + 1));
    expect(await admin.xlen(`${store.prefix}{c3}:e`)).toBe(4_000);
    // ioredis resends a command whose reply a kill lost; the script knows its own commit, so none is reported failed.
    expect(failures).toBe(0);
  });

  it('answers STORE_UNAVAILABLE, not a hang, when Redis is gone', async () => {
    const own = await startRedis();
    const store = createRedisStore({ url: own.url, prefix: 'gone:' });
    stores.push(store);
    await store.commit({ expectedVersion: 0, record: testRecord('gone', 1, 0), events: [], journal: [] });
    await own.kill();
    const started = Date.now();
    await expect(store.commit({ expectedVersion: 1, record: testRecord('gone', 2, 0), events: [], journal: [] })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
    await expect(store.load('gone')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('Redis store: keys, TTL, corruption, durability', () => {
  it('writes every key under its prefix, and stores with other prefixes do not see its sessions', async () => {
    const a = open({ prefix: 'app-a:' });
    const b = open({ prefix: 'app-b:' });
    await a.commit({
      expectedVersion: 0,
      record: testRecord('shared-id', 1, 2),
      events: testEvents('shared-id', 1, 2),
      journal: [{ key: 'k@1', kind: 'llm', name: 'c', idempotent: true, startedAt: 1 }],
    });
    const keys = await admin.keys('*shared-id*');
    expect(keys.length).toBe(3);
    expect(keys.every((k) => k.startsWith('app-a:'))).toBe(true);
    expect(await admin.keys('app-a:index*')).toHaveLength(2);
    expect(await b.load('shared-id')).toBeUndefined();
    expect((await b.listSessions()).sessions).toEqual([]);
  });

  it('expires a finished session after the configured TTL and keeps running ones, dropping expired ones from listings', async () => {
    const store = open({ finishedTtlSeconds: 100 });
    await store.commit({
      expectedVersion: 0,
      record: testRecord('runs', 1, 1, { status: 'running' }),
      events: [testEvent('runs', 1)],
      journal: [{ key: 'k@1', kind: 'tool', name: 't', idempotent: true, startedAt: 1 }],
    });
    await store.commit({
      expectedVersion: 0,
      record: testRecord('ends', 1, 1, { status: 'running' }),
      events: [testEvent('ends', 1)],
      journal: [{ key: 'k@1', kind: 'tool', name: 't', idempotent: true, startedAt: 1 }],
    });
    await store.commit({
      expectedVersion: 1,
      record: testRecord('ends', 2, 2, { status: 'done' }),
      events: [testEvent('ends', 2)],
      journal: [],
    });
    for (const kind of ['r', 'e', 'j']) {
      expect(await admin.ttl(`${store.prefix}{runs}:${kind}`)).toBe(-1);
      const ttl = await admin.ttl(`${store.prefix}{ends}:${kind}`);
      expect(ttl).toBeGreaterThan(90);
      expect(ttl).toBeLessThanOrEqual(100);
    }
    // Expiry itself is Redis's; make it happen now and look at the listing.
    for (const kind of ['r', 'e', 'j']) await admin.pexpire(`${store.prefix}{ends}:${kind}`, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await store.listSessions()).sessions.map((s) => s.sessionId)).toEqual(['runs']);
    expect(await admin.zrange(`${store.prefix}index`, '0', '-1')).toEqual(['runs']);
    expect(await store.load('ends')).toBeUndefined();
  });

  it('refuses bad options with STORE_BAD_OPTIONS: a negative TTL, a client that prefixes keys itself', () => {
    expect(() => createRedisStore({ url: server.url, finishedTtlSeconds: -1 })).toThrowError(
      expect.objectContaining({ code: 'STORE_BAD_OPTIONS' }),
    );
    const prefixed = new Redis(server.url, { keyPrefix: 'mine:', lazyConnect: true });
    expect(() => createRedisStore({ redis: prefixed })).toThrowError(
      expect.objectContaining({ code: 'STORE_BAD_OPTIONS', message: expect.stringContaining('keyPrefix') }),
    );
    prefixed.disconnect();
  });

  it('bounds the work of one listing: a short page with a cursor, and paging still finds every match once', async () => {
    const store = open({ listScanBudget: 3 });
    for (let i = 0; i < 12; i++) {
      const id = `s${String(i).padStart(2, '0')}`;
      await store.commit({
        expectedVersion: 0,
        record: testRecord(id, 1, 0, { status: i % 4 === 0 ? 'waiting' : 'done', createdAt: 100 + i }),
        events: [],
        journal: [],
      });
    }
    const first = await store.listSessions({ status: 'waiting', limit: 2 });
    // s11, s10 and s09 are the budget and none is waiting: an empty page that says where to go on.
    expect(first.sessions).toEqual([]);
    expect(first.nextCursor).toBeDefined();
    const seen = [...first.sessions.map((s) => s.sessionId)];
    let cursor = first.nextCursor;
    for (let pages = 0; cursor && pages < 20; pages++) {
      const page = await store.listSessions({ status: 'waiting', limit: 2, cursor });
      seen.push(...page.sessions.map((s) => s.sessionId));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(['s08', 's04', 's00']);
  });

  it('keeps finished sessions forever when no TTL is configured', async () => {
    const store = open();
    await store.commit({
      expectedVersion: 0,
      record: testRecord('kept', 1, 1, { status: 'done' }),
      events: [testEvent('kept', 1)],
      journal: [],
    });
    expect(await admin.ttl(`${store.prefix}{kept}:r`)).toBe(-1);
  });

  it('refuses a session whose stored record or event has a flipped byte with FLOW_STORE_CORRUPT naming it, and loads others', async () => {
    const store = open();
    await store.commit({ expectedVersion: 0, record: testRecord('bad', 1, 2), events: testEvents('bad', 1, 2), journal: [] });
    await store.commit({ expectedVersion: 0, record: testRecord('good', 1, 2), events: testEvents('good', 1, 2), journal: [] });
    const recordKey = `${store.prefix}{bad}:r`;
    const sealed = (await admin.hget(recordKey, 'r'))!;
    const at = sealed.indexOf('idle') + 1;
    await admin.hset(recordKey, 'r', sealed.slice(0, at) + String.fromCharCode(sealed.charCodeAt(at) ^ 1) + sealed.slice(at + 1));
    await expect(store.load('bad')).rejects.toMatchObject({
      code: 'FLOW_STORE_CORRUPT',
      details: { sessionId: 'bad' },
      message: expect.stringContaining("'bad'"),
    });
    expect((await store.load('good'))!.seq).toBe(2);
    await admin.xadd(`${store.prefix}{good}:e`, '3-0', 'e', 'garbage');
    await expect(store.readEvents('good')).rejects.toMatchObject({
      code: 'FLOW_STORE_CORRUPT',
      message: expect.stringContaining('event 3'),
    });
  });

  it('D12: reports "no persistence" with neither RDB nor AOF, "snapshot only" with RDB alone, and the fsync policy with an AOF', async () => {
    expect(await open().durability()).toEqual({
      appendonly: false,
      snapshots: false,
      summary: 'Redis durability: no persistence (no RDB snapshots, no append-only file: a Redis restart loses every session)',
    });
    const dir = await mkdtemp(join(tmpdir(), 'flowing-aof-'));
    const rdb = await startRedis(['--save', '3600 1', '--appendonly', 'no'], { dir });
    try {
      const store = createRedisStore({ url: rdb.url });
      expect(await store.durability()).toEqual({ appendonly: false, snapshots: true, summary: 'Redis durability: snapshot only' });
      await store.close();
    } finally {
      await rdb.stop();
    }
    const aof = await startRedis(['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], { dir });
    try {
      const store = createRedisStore({ url: aof.url });
      expect(await store.durability()).toEqual({
        appendonly: true,
        appendfsync: 'always',
        summary: 'Redis durability: append-only file, fsync always',
      });
      await store.close();
    } finally {
      await aof.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Redis store: live feed across connections', () => {
  it('delivers events another connection commits, once each and in order, from the last seen id', async () => {
    const reader = open({ redisOptions: { connectionName: 'flowing-feed-a' } });
    const writer = createRedisStore({ url: server.url, prefix: reader.prefix });
    stores.push(writer);
    await writer.commit({ expectedVersion: 0, record: testRecord('live', 1, 3), events: testEvents('live', 1, 3), journal: [] });
    const seen: number[] = [];
    const stop = reader.follow!('live', 2, (events) => seen.push(...events.map((e) => e.seq)));
    await delivered(seen, 1);
    await writer.commit({ expectedVersion: 1, record: testRecord('live', 2, 5), events: testEvents('live', 4, 5), journal: [] });
    await delivered(seen, 3);
    stop();
    expect(seen).toEqual([3, 4, 5]);
  });

  it('loses nothing when the blocking connection is killed: it reads again from the last seen id, not from "$"', async () => {
    const reader = open({ redisOptions: { connectionName: 'flowing-feed-b', retryStrategy: () => 20 } });
    const writer = createRedisStore({ url: server.url, prefix: reader.prefix });
    stores.push(writer);
    await writer.commit({ expectedVersion: 0, record: testRecord('cut', 1, 1), events: [testEvent('cut', 1)], journal: [] });
    const seen: number[] = [];
    const stop = reader.follow!('cut', 0, (events) => seen.push(...events.map((e) => e.seq)));
    await delivered(seen, 1);
    for (let i = 2; i <= 30; i++) {
      if (i % 5 === 0) for (const id of await clientIds('flowing-feed-b')) await admin.client('KILL', 'ID', id);
      await writer.commit({ expectedVersion: i - 1, record: testRecord('cut', i, i), events: [testEvent('cut', i)], journal: [] });
    }
    await delivered(seen, 30, 10_000);
    stop();
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it('wakes its blocked read when a session is followed, so a new follower does not wait for the BLOCK timeout', async () => {
    const reader = open({ redisOptions: { connectionName: 'flowing-feed-wake' } });
    const writer = createRedisStore({ url: server.url, prefix: reader.prefix });
    stores.push(writer);
    const stopFirst = reader.follow!('first', 0, () => {});
    // The feed is now blocked on 'first' alone: Redis shows its connection with the `b` (blocked) flag.
    const blocked = async () =>
      String(await admin.client('LIST'))
        .split('\n')
        .filter((line) => line.includes(' name=flowing-feed-wake ') && /\bflags=\S*b/.test(line)).length;
    await vi.waitFor(async () => expect(await blocked()).toBe(1), { timeout: 3_000, interval: 5 });
    const seen: number[] = [];
    const stopSecond = reader.follow!('second', 0, (events) => seen.push(...events.map((e) => e.seq)));
    const started = Date.now();
    await writer.commit({ expectedVersion: 0, record: testRecord('second', 1, 1), events: [testEvent('second', 1)], journal: [] });
    await delivered(seen, 1, 4_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    stopFirst();
    stopSecond();
  });
});
