import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRuntime } from '@flowing/runtime';
import { createRedisStore, type RedisStore } from '@flowing/runtime/redis';
import { expectGapless, gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { testEvent, testRecord } from '../helpers/stores.ts';

let server: TestRedis;
let admin: Redis;
const stores: RedisStore[] = [];
let prefixes = 0;
const open = (options: Parameters<typeof createRedisStore>[0] = {}) => {
  const store = createRedisStore({ url: server.url, prefix: `lease${++prefixes}:`, ...options });
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

/** vi.waitFor options: re-check every 5 ms for up to 5 s. */
const soon = { timeout: 5_000, interval: 5 };

/** Asks for the lease until it is granted (a refused attempt writes nothing), answering the grant. */
async function acquireOnceFree(store: RedisStore, sessionId: string, owner: string) {
  return vi.waitFor(async () => {
    const attempt = await store.leases.acquire(sessionId, owner);
    expect(attempt.granted, `the lease of ${sessionId} to be free for ${owner}`).toBe(true);
    return attempt;
  }, soon);
}

/** Resolves once the gate tool has been called `n` times. */
function called(gate: ReturnType<typeof gateTool>, n = 1): Promise<void> {
  return vi.waitFor(() => expect(gate.state.calls).toBe(n), soon);
}

/** Every key of a store's prefix with its type, to show a refused write changed nothing. */
async function dump(store: RedisStore): Promise<string> {
  const keys = (await admin.keys(`${store.prefix}*`)).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const type = await admin.type(key);
    if (type === 'hash') parts.push(key, JSON.stringify(Object.entries(await admin.hgetall(key)).sort()));
    else if (type === 'stream') parts.push(key, JSON.stringify(await admin.xrange(key, '-', '+')));
    else if (type === 'zset') parts.push(key, JSON.stringify(await admin.zrange(key, '0', '-1')));
    else if (type === 'set') parts.push(key, JSON.stringify((await admin.smembers(key)).sort()));
  }
  return parts.join('\n');
}

describe('Redis session leases', () => {
  it('grants one owner at a time, with a larger fencing token on every grant, and again after release or expiry', async () => {
    const store = open({ lease: { ttlMs: 300 } });
    await store.commit({ expectedVersion: 0, record: testRecord('s1', 1, 1), events: [testEvent('s1', 1)], journal: [] });
    const first = await store.leases.acquire('s1', 'A');
    expect(first).toEqual({ granted: true, token: 1 });
    const refused = await store.leases.acquire('s1', 'B');
    expect(refused.granted).toBe(false);
    if (!refused.granted) {
      expect(refused.holder).toBe('A');
      expect(refused.retryInMs).toBeGreaterThan(0);
      expect(refused.retryInMs).toBeLessThanOrEqual(300);
    }
    await store.leases.release('s1', 1);
    expect(await store.leases.acquire('s1', 'B')).toEqual({ granted: true, token: 2 });
    expect(await store.leases.renew('s1', 'B', 2)).toBe(true);
    expect((await store.leases.acquire('s1', 'C')).granted).toBe(false);
    // B stops renewing: C's first grant is the moment B's lease expired.
    expect(await acquireOnceFree(store, 's1', 'C')).toEqual({ granted: true, token: 3 });
    expect(await store.leases.renew('s1', 'B', 2)).toBe(false);
  });

  it("refuses a stale holder's commit with STORE_FENCED even when its expected version is current, and stores none of it", async () => {
    const store = open({ lease: { ttlMs: 200 } });
    await store.commit({ expectedVersion: 0, record: testRecord('s2', 1, 1), events: [testEvent('s2', 1)], journal: [] });
    const paused = await store.leases.acquire('s2', 'A');
    if (!paused.granted) throw new Error('A should hold the lease');
    // A is paused past its TTL: B is granted the lease as soon as A's expires.
    const taker = await acquireOnceFree(store, 's2', 'B');
    expect(taker.granted).toBe(true);
    const before = await dump(store);
    // B has not written yet, so version 1 is still current: only the fence stands between A and the store.
    await expect(
      store.commit({
        expectedVersion: 1,
        record: testRecord('s2', 2, 2),
        events: [testEvent('s2', 2)],
        journal: [{ key: 'pay@2', kind: 'tool', name: 'pay', idempotent: false, startedAt: 5 }],
        fence: paused.token,
      }),
    ).rejects.toMatchObject({ code: 'STORE_FENCED' });
    expect(await dump(store)).toBe(before);
    // The new holder's commit with its own token goes through.
    await store.commit({
      expectedVersion: 1,
      record: testRecord('s2', 2, 2),
      events: [testEvent('s2', 2)],
      journal: [],
      fence: taker.granted ? taker.token : 0,
    });
    expect((await store.load('s2'))?.version).toBe(2);
  });

  it('refuses a commit without a token while another writer holds the lease', async () => {
    const store = open();
    await store.commit({ expectedVersion: 0, record: testRecord('s3', 1, 1), events: [testEvent('s3', 1)], journal: [] });
    const held = await store.leases.acquire('s3', 'A');
    await expect(
      store.commit({ expectedVersion: 1, record: testRecord('s3', 2, 2), events: [testEvent('s3', 2)], journal: [] }),
    ).rejects.toMatchObject({ code: 'STORE_FENCED' });
    if (held.granted) await store.leases.release('s3', held.token);
    await store.commit({ expectedVersion: 1, record: testRecord('s3', 2, 2), events: [testEvent('s3', 2)], journal: [] });
    expect((await store.load('s3'))?.seq).toBe(2);
  });

  it('answers SESSION_NOT_FOUND for the lease of an unknown session and writes no key', async () => {
    const store = open();
    await expect(store.leases.acquire('nobody', 'A')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(await admin.keys(`${store.prefix}*`)).toEqual([]);
  });

  it('lists as orphans the running sessions nobody holds a lease on, and only those', async () => {
    const store = open({ lease: { ttlMs: 200 } });
    for (const [id, status] of [
      ['run-free', 'running'],
      ['run-held', 'running'],
      ['waits', 'waiting'],
    ] as const) {
      await store.commit({ expectedVersion: 0, record: testRecord(id, 1, 1, { status }), events: [testEvent(id, 1)], journal: [] });
    }
    await store.leases.acquire('run-held', 'A');
    const page = await store.leases.orphans();
    expect(page.sessions.map((s) => s.sessionId)).toEqual(['run-free']);
    expect(page.sessions[0]).toMatchObject({ status: 'running', machineId: 'm', version: 1, seq: 1 });
    // Nobody renews A's lease: once it expires, run-held is an orphan too.
    await vi.waitFor(
      async () => expect((await store.leases.orphans()).sessions.map((s) => s.sessionId).sort()).toEqual(['run-free', 'run-held']),
      soon,
    );
    // A session that stops running leaves the set with its next commit.
    await store.commit({
      expectedVersion: 1,
      record: testRecord('run-free', 2, 2, { status: 'waiting' }),
      events: [testEvent('run-free', 2)],
      journal: [],
    });
    expect((await store.leases.orphans()).sessions.map((s) => s.sessionId)).toEqual(['run-held']);
  });
});

describe('Runtimes sharing one Redis: leases', () => {
  it("applies an event sent to a second runtime after the first one's step ends, in order, with no conflict", async () => {
    const a = open({ prefix: 'shared-1:' });
    const b = open({ prefix: 'shared-1:' });
    const gate = gateTool();
    const ra = createRuntime({ machines: [refusalMachine(gate.tool)], store: a });
    const rb = createRuntime({ machines: [refusalMachine(gate.tool)], store: b });
    const session = await ra.createSession('refusals');
    const first = ra.session(session.id).send({ type: 'GO', n: 1 });
    await called(gate);
    const attempts = vi.spyOn(b.leases, 'acquire');
    const second = rb.session(session.id).send({ type: 'FINISH' }); // waits for A's lease
    // B has asked for the lease and been told A holds it, twice: B is at the point where it would apply FINISH and
    // is held back there, so the state read now is the one FINISH must not have changed.
    const refusedToB = () => attempts.mock.settledResults.filter((r) => r.type === 'fulfilled' && !r.value.granted).length;
    await vi.waitFor(() => expect(refusedToB()).toBeGreaterThanOrEqual(2), soon);
    expect((await rb.session(session.id).snapshot()).state).toBe('working');
    void gate.release();
    expect(await first).toMatchObject({ applied: true, state: 'idle' });
    expect(await second).toMatchObject({ applied: true, state: 'done' });
    const log = await ra.session(session.id).events();
    expect(expectGapless(log)).toBe(true);
    expect(log.filter((e) => e.type === 'transition.rejected')).toEqual([]);
    expect(gate.state.calls).toBe(1);
  });

  it("refuses with SESSION_LEASED (retryAfterMs) when the other runtime's step outlasts the wait, and logs nothing", async () => {
    const a = open({ prefix: 'shared-2:' });
    const b = open({ prefix: 'shared-2:' });
    const gate = gateTool();
    const ra = createRuntime({ machines: [refusalMachine(gate.tool)], store: a });
    const rb = createRuntime({ machines: [refusalMachine(gate.tool)], store: b, lease: { waitMs: 150 } });
    const session = await ra.createSession('refusals');
    const first = ra.session(session.id).send({ type: 'GO', n: 1 });
    await called(gate);
    const seqBefore = (await rb.session(session.id).snapshot()).seq;
    const started = performance.now();
    const refused = await rb
      .session(session.id)
      .send({ type: 'FINISH' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(refused).toMatchObject({ code: 'SESSION_LEASED', details: { retryAfterMs: expect.any(Number) } });
    expect((await rb.session(session.id).snapshot()).seq).toBe(seqBefore);
    void gate.release();
    await first;
  });

  it('stops a run whose lease was taken over (LEASE_LOST), aborts its call and writes nothing more', async () => {
    const a = open({ prefix: 'shared-3:', lease: { ttlMs: 300 } });
    const thief = open({ prefix: 'shared-3:', lease: { ttlMs: 5_000 } });
    const gate = gateTool();
    const ra = createRuntime({ machines: [refusalMachine(gate.tool)], store: a });
    const session = await ra.createSession('refusals');
    const commits = vi.spyOn(a, 'commit');
    const sending = ra.session(session.id).send({ type: 'GO', n: 1 });
    await called(gate);
    const stored = async () => JSON.stringify([await a.load(session.id), await a.readEvents(session.id), await a.readJournal(session.id)]);
    const before = await stored();
    // Another process takes the lease as if A had been paused past its TTL.
    await admin.del(`shared-3:{${session.id}}:lease`);
    expect((await thief.leases.acquire(session.id, 'other')).granted).toBe(true);
    const result = await sending;
    expect(result).toMatchObject({ applied: false, code: 'LEASE_LOST' });
    expect(gate.state.signal?.aborted).toBe(true);
    const commitsAtLoss = commits.mock.calls.length;
    // The tool answers late: its answer is back in A (the gate resolves after the tool returned), and one turn of the
    // event loop later every continuation of it has run. Nothing on that path waits on a timer, so a commit made from
    // the late answer would have been sent by now; the reads below go over A's own connection, behind any such write.
    await gate.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits.mock.calls.length).toBe(commitsAtLoss);
    // A's record, log and journal are as they were when it lost the lease.
    expect(await stored()).toBe(before);
  });
});
