import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRuntime,
  EMPTY_SESSION_AT,
  sessionAt,
  type AnyMachineDefinition,
  type SessionRecord,
  type SessionStore,
} from '@flowing/runtime';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { countingTools } from '../helpers/runtime-counting.ts';
import { guardedDoneMachine, quoteTool } from '../helpers/runtime-failing-machines.ts';
import { createServer } from '@flowing/runtime/server';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

/** A SQLite store that keeps each record it committed: what a reader of the store saw after every write. */
async function recordingSqlite(): Promise<{ store: SessionStore; records: SessionRecord[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-at-'));
  const sqlite = createSqliteStore({ file: join(dir, 'sessions.db') });
  cleanup.push(async () => {
    await sqlite.close();
    await rm(dir, { recursive: true, force: true });
  });
  const records: SessionRecord[] = [];
  const store: SessionStore = {
    name: sqlite.name,
    load: (id) => sqlite.load(id),
    readEvents: (id, after, limit) => sqlite.readEvents(id, after, limit),
    readJournal: (id) => sqlite.readJournal(id),
    listSessions: (query) => sqlite.listSessions(query),
    async commit(request) {
      await sqlite.commit(request);
      records.push(structuredClone(request.record));
    },
  };
  return { store, records };
}

describe('sessionAt', () => {
  it('folds the log to the stored state, context, status and approval at every commit of a refund session', async () => {
    const { store, records } = await recordingSqlite();
    const { tools, counts } = countingTools(orderSupport.tools);
    const machine = { ...orderSupport, tools } as AnyMachineDefinition;
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    await session.send({ type: 'APPROVE' }); // refused while idle: a transition.rejected in the log
    await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
    await session.send({ type: 'APPROVE' });
    await session.cancel('the customer left');
    const events = await session.events();
    const calls = { ...counts };
    expect(records.length).toBeGreaterThan(5);
    for (const record of records) {
      const at = sessionAt(events, record.seq);
      const snapshot = record.snapshot as { value: unknown; context: unknown };
      expect({ seq: at.seq, state: at.state, context: at.context }).toEqual({
        seq: record.seq,
        state: snapshot.value,
        context: snapshot.context,
      });
      expect(at.status).toBe(record.status);
      expect(at.approval ? { id: at.approval.approvalId, decision: at.approval.decision } : null).toEqual(
        record.approval ? { id: record.approval.id, decision: record.approval.decision } : null,
      );
    }
    // Folding calls nothing.
    expect(counts).toEqual(calls);
  });

  it("folds a stop for a person (a result no branch takes) and the person's answer to the stored status", async () => {
    const { store, records } = await recordingSqlite();
    const machine = guardedDoneMachine(quoteTool().tool);
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'CHECK', amount: 500 });
    expect((await session.snapshot()).status).toBe('needs_attention');
    const events = await session.events();
    expect(sessionAt(events, events.length).status).toBe('needs_attention');
    const callId = (events.find((e) => e.type === 'tool.started')!.data as { callId: string }).callId;
    const app = createServer(runtime, { log: () => {} });
    const resolved = await app.request(`http://127.0.0.1/sessions/${session.id}/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: '127.0.0.1' },
      body: JSON.stringify({ callId, outcome: 'completed', output: { total: 50 } }),
    });
    expect(resolved.status).toBe(200);
    const after = await session.events();
    expect(sessionAt(after, after.length)).toMatchObject({ status: 'waiting', state: 'approved' });
    for (const record of records) expect(sessionAt(after, record.seq).status).toBe(record.status);
  });

  it('shows pending calls with their arguments between start and result, and the last rejection', async () => {
    const { store } = await recordingSqlite();
    const runtime = createRuntime({ machines: [orderSupport], store });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
    await session.send({ type: 'APPROVE' });
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    const events = await session.events();
    const rejected = events.find((e) => e.type === 'transition.rejected')!;
    expect(sessionAt(events, rejected.seq).lastRejection).toMatchObject({
      seq: rejected.seq,
      event: 'APPROVE',
      code: 'NO_TRANSITION',
      states: ['active.idle'],
    });
    const started = events.find((e) => e.type === 'tool.started' && e.data.tool === 'query_order')!;
    expect(sessionAt(events, started.seq).pendingCalls).toEqual([
      { callId: started.data.callId, kind: 'tool', name: 'query_order', args: started.data.args, startedAt: started.at, attempt: 1 },
    ]);
    expect(sessionAt(events, started.seq).status).toBe('running');
    expect(sessionAt(events, started.seq + 1).pendingCalls).toEqual([]);
    expect(sessionAt(events, started.seq).activeStates).toEqual(['active.fetch_order']);
  });

  it('gives the empty view at seq 0 and refuses a seq outside the log', () => {
    expect(sessionAt([], 0)).toEqual(EMPTY_SESSION_AT);
    expect(() => sessionAt([], 1)).toThrow(RangeError);
    expect(() => sessionAt([], -1)).toThrow(RangeError);
    expect(() => sessionAt([], 0.5)).toThrow(RangeError);
  });
});
