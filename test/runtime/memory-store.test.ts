import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, type RuntimeEvent, type SessionRecord } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { countingTools } from '../helpers/runtime-counting.ts';

const record = (version: number, seq = 0): SessionRecord => ({
  sessionId: 's1',
  machineId: 'm',
  specHash: 'h',
  traceId: 't',
  status: 'waiting',
  version,
  seq,
  step: 1,
  snapshot: { value: 'idle' },
  usage: { promptTokens: 0, completionTokens: 0 },
  createdAt: 1,
  updatedAt: 1,
});
const event = (seq: number): RuntimeEvent => Object.freeze({ seq, sessionId: 's1', traceId: 't', at: 1, type: 'state.changed', data: {} });

describe('memory SessionStore', () => {
  it('writes record, events and journal together and refuses a stale version with STORE_CONFLICT', async () => {
    const store = createMemoryStore();
    await store.commit({
      expectedVersion: 0,
      record: record(1, 2),
      events: [event(1), event(2)],
      journal: [{ key: 'a@1', kind: 'tool', name: 'x', idempotent: true, startedAt: 1 }],
    });
    await expect(store.commit({ expectedVersion: 0, record: record(1, 3), events: [event(3)], journal: [] })).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
    expect((await store.load('s1'))!.seq).toBe(2);
    expect((await store.readEvents('s1')).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.readJournal('s1')).toHaveLength(1);
  });

  it('refuses events whose seq does not continue the log', async () => {
    const store = createMemoryStore();
    await store.commit({ expectedVersion: 0, record: record(1, 1), events: [event(1)], journal: [] });
    await expect(store.commit({ expectedVersion: 1, record: record(2, 3), events: [event(3)], journal: [] })).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
  });

  it('reads events after a seq, with a limit', async () => {
    const store = createMemoryStore();
    await store.commit({ expectedVersion: 0, record: record(1, 5), events: [1, 2, 3, 4, 5].map(event), journal: [] });
    expect((await store.readEvents('s1', 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
    expect(await store.readEvents('nobody')).toEqual([]);
  });
});

describe('idle sessions are stored snapshots', () => {
  it('runs a refund flow with no warm actors: every event restores the session from the store', async () => {
    const { tools, counts } = countingTools(orderSupport.tools);
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [orderSupport], store, tools, warmSessions: 0 });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'refund for A1003 please' });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: { active: 'idle' } });
    expect(counts).toMatchObject({ resolve_user: 1, query_order: 1, issue_refund: 1 });
    expect((await session.snapshot()).context).toMatchObject({ customer: { name: 'Ada Lovelace' }, refundId: expect.any(String) });
  });
});
