import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type SessionStore } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { countingTools } from '../helpers/runtime-counting.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { createBackend, STORE_KINDS, testEvent, testEvents, testRecord, type StoreBackend, type StoreKind } from '../helpers/stores.ts';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** What a store holds about one session, read back whole. */
async function contents(store: SessionStore, id: string) {
  return { record: await store.load(id), events: await store.readEvents(id), journal: await store.readJournal(id) };
}

describe.each(STORE_KINDS)('SessionStore contract: %s', (kind: StoreKind) => {
  let backend: StoreBackend;
  let store: SessionStore;
  beforeAll(async () => {
    backend = await createBackend(kind, redis);
    store = backend.open();
  });
  afterAll(async () => {
    await backend?.remove();
  });

  it('loads nothing for an unknown session and reads empty logs for it', async () => {
    expect(await store.load('nobody')).toBeUndefined();
    expect(await store.readEvents('nobody')).toEqual([]);
    expect(await store.readJournal('nobody')).toEqual([]);
  });

  it('reads back exactly the record, events and journal a commit wrote, events frozen', async () => {
    const record = testRecord('rt', 1, 2, {
      approval: { id: 'a1', state: 'await', tool: 'refund', args: { amount: 25 }, argsHash: 'x' },
      calls: { fetch: 'fetch@1' },
    });
    const journal = [{ key: 'fetch@1', kind: 'tool' as const, name: 'query_order', idempotent: true, startedAt: 5 }];
    await store.commit({ expectedVersion: 0, record, events: testEvents('rt', 1, 2), journal });
    const read = await contents(store, 'rt');
    expect(read.record).toEqual(record);
    expect(read.events).toEqual(testEvents('rt', 1, 2));
    expect(read.events.every((e) => Object.isFrozen(e) && Object.isFrozen(e.data))).toBe(true);
    expect(read.journal).toEqual(journal);
  });

  it('refuses a stale expected version with STORE_CONFLICT and changes nothing', async () => {
    await store.commit({ expectedVersion: 0, record: testRecord('stale', 1, 1), events: [testEvent('stale', 1)], journal: [] });
    const before = await contents(store, 'stale');
    await expect(
      store.commit({ expectedVersion: 0, record: testRecord('stale', 1, 2), events: [testEvent('stale', 2)], journal: [] }),
    ).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
    await expect(
      store.commit({
        expectedVersion: 2,
        record: testRecord('stale', 3, 2),
        events: [testEvent('stale', 2)],
        journal: [{ key: 'k@1', kind: 'tool', name: 't', idempotent: false, startedAt: 1 }],
      }),
    ).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
    expect(await contents(store, 'stale')).toEqual(before);
  });

  it('lets exactly one of ten concurrent writers of the same version win (no lost update)', async () => {
    await store.commit({ expectedVersion: 0, record: testRecord('race', 1, 1), events: [testEvent('race', 1)], journal: [] });
    const writers = Array.from({ length: 10 }, (_, i) =>
      store.commit({
        expectedVersion: 1,
        record: testRecord('race', 2, 2, { step: 100 + i }),
        events: [testEvent('race', 2, { writer: i })],
        journal: [],
      }),
    );
    const results = await Promise.allSettled(writers);
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'STORE_CONFLICT' });
    const read = await contents(store, 'race');
    expect(read.record!.step).toBe(100 + won[0]!);
    expect(read.events.map((e) => e.data)).toEqual([{ state: 'idle' }, { writer: won[0] }]);
  });

  it('refuses events that do not continue the log, and a record whose seq or version does not match, writing nothing', async () => {
    await store.commit({ expectedVersion: 0, record: testRecord('gaps', 1, 1), events: [testEvent('gaps', 1)], journal: [] });
    const before = await contents(store, 'gaps');
    await expect(
      store.commit({ expectedVersion: 1, record: testRecord('gaps', 2, 3), events: [testEvent('gaps', 3)], journal: [] }),
    ).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
    await expect(
      store.commit({ expectedVersion: 1, record: testRecord('gaps', 2, 5), events: [testEvent('gaps', 2)], journal: [] }),
    ).rejects.toMatchObject({ code: 'STORE_BAD_WRITE' });
    await expect(
      store.commit({ expectedVersion: 1, record: testRecord('gaps', 7, 2), events: [testEvent('gaps', 2)], journal: [] }),
    ).rejects.toMatchObject({ code: 'STORE_BAD_WRITE' });
    await expect(
      store.commit({ expectedVersion: 1, record: testRecord('gaps', 2, 2), events: [testEvent('other', 2)], journal: [] }),
    ).rejects.toMatchObject({ code: 'STORE_BAD_WRITE' });
    expect(await contents(store, 'gaps')).toEqual(before);
  });

  it('reads events after a seq, at most a limit of them, in order', async () => {
    await store.commit({ expectedVersion: 0, record: testRecord('page', 1, 5), events: testEvents('page', 1, 5), journal: [] });
    await store.commit({ expectedVersion: 1, record: testRecord('page', 2, 8), events: testEvents('page', 6, 8), journal: [] });
    expect((await store.readEvents('page')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await store.readEvents('page', 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
    expect((await store.readEvents('page', 4, 100)).map((e) => e.seq)).toEqual([5, 6, 7, 8]);
    expect(await store.readEvents('page', 8)).toEqual([]);
    expect(await store.readEvents('page', 3, 0)).toEqual([]);
  });

  it('keeps one journal entry per key, the latest written (started, then completed)', async () => {
    const started = { key: 'pay@3', kind: 'tool' as const, name: 'charge', idempotent: false, startedAt: 10 };
    await store.commit({
      expectedVersion: 0,
      record: testRecord('jr', 1, 0),
      events: [],
      journal: [started, { ...started, key: 'ask@2', kind: 'llm', name: 'classify', idempotent: true }],
    });
    const completed = { ...started, completed: { at: 12, ok: true as const, output: { id: 'r-1' } } };
    await store.commit({ expectedVersion: 1, record: testRecord('jr', 2, 0), events: [], journal: [completed] });
    const journal = [...(await store.readJournal('jr'))].sort((a, b) => a.key.localeCompare(b.key));
    expect(journal).toEqual([{ ...started, key: 'ask@2', kind: 'llm', name: 'classify', idempotent: true }, completed]);
  });

  describe('listSessions', () => {
    let list: SessionStore;
    beforeAll(async () => {
      // A store of its own, so the sessions other tests create do not show up here.
      const own = await createBackend(kind, redis);
      list = own.open();
      const sessions: Array<[id: string, machine: string, status: 'running' | 'waiting' | 'done' | 'needs_attention', createdAt: number]> =
        [
          ['a', 'order', 'waiting', 100],
          ['b', 'order', 'done', 200],
          ['c', 'ops', 'waiting', 300],
          ['d', 'order', 'running', 300],
          ['e', 'order', 'needs_attention', 300],
          ['f', 'ops', 'done', 400],
          ['g', 'order', 'waiting', 500],
        ];
      for (const [id, machineId, status, createdAt] of sessions) {
        await list.commit({
          expectedVersion: 0,
          record: testRecord(id, 1, 1, { machineId, status: 'running', createdAt }),
          events: [testEvent(id, 1)],
          journal: [],
        });
        await list.commit({
          expectedVersion: 1,
          record: testRecord(id, 2, 1, {
            machineId,
            status,
            createdAt,
            ...(id === 'g' ? { approval: { id: 'ap', state: 's', tool: 't', args: {}, argsHash: 'h' } } : {}),
          }),
          events: [],
          journal: [],
        });
      }
      cleanups.push(own.remove);
    });
    const cleanups: Array<() => Promise<void>> = [];
    afterAll(async () => {
      for (const c of cleanups) await c();
    });

    const ids = (page: { sessions: Array<{ sessionId: string }> }) => page.sessions.map((s) => s.sessionId);

    it('lists every session newest first, ties by id descending, with a summary of each', async () => {
      const page = await list.listSessions();
      expect(ids(page)).toEqual(['g', 'f', 'e', 'd', 'c', 'b', 'a']);
      expect(page.nextCursor).toBeUndefined();
      expect(page.sessions[0]).toEqual({
        sessionId: 'g',
        machineId: 'order',
        status: 'waiting',
        version: 2,
        seq: 1,
        createdAt: 500,
        updatedAt: 1_002,
        awaitingApproval: true,
      });
      expect(page.sessions[1]!.awaitingApproval).toBe(false);
    });

    it('filters by machine, by status, by several statuses and by both', async () => {
      expect(ids(await list.listSessions({ machineId: 'ops' }))).toEqual(['f', 'c']);
      expect(ids(await list.listSessions({ status: 'waiting' }))).toEqual(['g', 'c', 'a']);
      expect(ids(await list.listSessions({ status: ['running', 'needs_attention'] }))).toEqual(['e', 'd']);
      expect(ids(await list.listSessions({ machineId: 'order', status: 'waiting' }))).toEqual(['g', 'a']);
      expect(ids(await list.listSessions({ machineId: 'nobody' }))).toEqual([]);
    });

    it('pages with a cursor through every match exactly once, also when sessions are created meanwhile', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await list.listSessions({ machineId: 'order', limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...ids(page));
        cursor = page.nextCursor;
        if (pages++ === 0)
          await list.commit({
            expectedVersion: 0,
            record: testRecord('new', 1, 0, { machineId: 'order', status: 'running', createdAt: 900 }),
            events: [],
            journal: [],
          });
      } while (cursor && pages < 10);
      expect(seen).toEqual(['g', 'e', 'd', 'b', 'a']);
    });

    it('shows the latest status of a session in the status filter', async () => {
      await list.commit({
        expectedVersion: 2,
        record: testRecord('a', 3, 1, { machineId: 'order', status: 'done', createdAt: 100 }),
        events: [],
        journal: [],
      });
      expect(ids(await list.listSessions({ status: 'waiting', machineId: 'order' }))).toEqual(['g']);
      expect(ids(await list.listSessions({ status: 'done', machineId: 'order' }))).toEqual(['b', 'a']);
    });

    it('refuses a cursor it did not make with STORE_BAD_CURSOR and a bad page size or status with STORE_BAD_QUERY', async () => {
      await expect(list.listSessions({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'STORE_BAD_CURSOR' });
      await expect(list.listSessions({ cursor: Buffer.from('{"x":1}').toString('base64url') })).rejects.toMatchObject({
        code: 'STORE_BAD_CURSOR',
      });
      await expect(list.listSessions({ limit: 0 })).rejects.toMatchObject({ code: 'STORE_BAD_QUERY' });
      await expect(list.listSessions({ limit: 501 })).rejects.toMatchObject({ code: 'STORE_BAD_QUERY' });
      await expect(list.listSessions({ status: 'sleeping' as never })).rejects.toMatchObject({ code: 'STORE_BAD_QUERY' });
    });

    it("names a child session's parent in its summary, through later commits, and no parent for any other session", async () => {
      const parent = { sessionId: 'p1', state: 'billing', callId: 'billing@2', depth: 1 };
      await list.commit({
        expectedVersion: 0,
        record: testRecord('p1', 1, 1, { machineId: 'kin', createdAt: 600 }),
        events: [testEvent('p1', 1)],
        journal: [],
      });
      await list.commit({
        expectedVersion: 0,
        record: testRecord('p1_billing_2', 1, 1, { machineId: 'kin', createdAt: 601, parent }),
        events: [testEvent('p1_billing_2', 1)],
        journal: [],
      });
      await list.commit({
        expectedVersion: 1,
        record: testRecord('p1_billing_2', 2, 1, { machineId: 'kin', createdAt: 601, parent, status: 'done' }),
        events: [],
        journal: [],
      });
      const page = await list.listSessions({ machineId: 'kin' });
      expect(page.sessions.map((s) => [s.sessionId, s.parentId])).toEqual([
        ['p1_billing_2', 'p1'],
        ['p1', undefined],
      ]);
      expect('parentId' in page.sessions[1]!).toBe(false);
    });
  });

  it('runs a refund flow with no warm actors, and a second store on the same data continues it', async () => {
    const { tools, counts } = countingTools(orderSupport.tools);
    const runtime = createRuntime({ machines: [orderSupport], store, tools, warmSessions: 0 });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'refund for A1003 please' });
    const other = backend.open();
    const again = createRuntime({ machines: [orderSupport], store: other, tools, warmSessions: 0 });
    expect(await again.session(session.id).send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: { active: 'idle' } });
    expect(counts).toMatchObject({ resolve_user: 1, query_order: 1, issue_refund: 1 });
    const log = await store.readEvents(session.id);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.filter((e) => e.type === 'approval.decided')).toHaveLength(1);
    expect((await store.load(session.id))!.seq).toBe(log.length);
    expect((await again.session(session.id).snapshot()).context).toMatchObject({ refundId: expect.any(String) });
  });
});
