import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, createScriptedProvider, type AnyMachineDefinition, type LlmProvider } from '@flowing/runtime';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { setup as xstateSetup } from 'xstate';
import { createVirtualClock } from '@flowing/runtime';
import { countingTools } from '../helpers/runtime-counting.ts';
import { defineTestMachine } from '../helpers/runtime-machines.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

async function sqliteFile(): Promise<{ file: string; open: () => SqliteStore }> {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-fork-'));
  const file = join(dir, 'sessions.db');
  const opened: SqliteStore[] = [];
  cleanup.push(async () => {
    for (const store of opened) await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    file,
    open: () => {
      const store = createSqliteStore({ file });
      opened.push(store);
      return store;
    },
  };
}

/** The scripted model, counting every call it answers. */
function countingModel() {
  const inner = createScriptedProvider();
  const counts = { calls: 0 };
  const llm: LlmProvider = {
    name: inner.name,
    isModel: inner.isModel,
    classify: (r, o) => {
      counts.calls++;
      return inner.classify(r, o);
    },
    extract: (r, o) => {
      counts.calls++;
      return inner.extract(r, o);
    },
    generate: (r, o) => {
      counts.calls++;
      return inner.generate(r, o);
    },
    agent: (r, o) => {
      counts.calls++;
      return inner.agent(r, o);
    },
  };
  return { llm, counts };
}

async function setup() {
  const db = await sqliteFile();
  const store = db.open();
  const { tools, counts } = countingTools(orderSupport.tools);
  const machine = { ...orderSupport, tools } as AnyMachineDefinition;
  const model = countingModel();
  const runtime = createRuntime({ machines: [machine], store, llm: model.llm });
  const parent = await runtime.createSession(machine, { userId: 'u-ada' }, { sessionId: 'parent-1' });
  await parent.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
  const log = await parent.events();
  const reset = () => {
    for (const name of Object.keys(counts)) counts[name] = 0;
    model.counts.calls = 0;
  };
  reset();
  return { db, store, machine, runtime, parent, log, counts, model, reset };
}

/** idle --START--> waiting --(after `ms`)--> timed_out. */
function timedMachine(ms: number) {
  const machine = xstateSetup({}).createMachine({
    id: 'timed',
    initial: 'idle',
    states: { idle: { on: { START: 'waiting' } }, waiting: { after: { [ms]: { target: 'timed_out' } } }, timed_out: { type: 'final' } },
  });
  const spec = {
    specVersion: 1,
    id: 'timed',
    context: {},
    events: { START: {} },
    initial: 'idle',
    states: { idle: { on: { START: 'waiting' } }, waiting: { after: { [String(ms)]: 'timed_out' } }, timed_out: { type: 'final' } },
  } as const;
  return defineTestMachine(spec as never, machine, []);
}

const seqOf = (log: readonly { seq: number; type: string }[], type: string) => log.find((e) => e.type === type)!.seq;

describe('forkSession', () => {
  it("starts at the approval wait with an edited total, re-runs none of the parent's calls, and pays the edited amount once", async () => {
    const { runtime, parent, log, counts, model, store } = await setup();
    const waitSeq = seqOf(log, 'approval.requested');
    const fork = await runtime.forkSession(parent.id, waitSeq, {
      context: { order: { order_id: 'A1002', status: 'processing', total: 7 } },
    });
    expect(counts).toEqual({ resolve_user: 0, query_order: 0, trace_shipment: 0, issue_refund: 0 });
    expect(model.counts.calls).toBe(0);
    const events = await fork.events();
    expect(events[0]).toMatchObject({ type: 'session.started', data: { parentId: parent.id, forkedAt: waitSeq } });
    expect(events[1]).toMatchObject({ type: 'state.changed', data: { state: { active: 'await_approval' }, event: 'flowing.fork' } });
    expect(events[2]).toMatchObject({ type: 'approval.requested', data: { tool: 'issue_refund', args: { order_id: 'A1002', amount: 7 } } });
    expect((await store.load(fork.id))!.fork).toEqual({ parentId: parent.id, forkedAt: waitSeq });
    const approved = await fork.send({ type: 'APPROVE' });
    expect(approved).toMatchObject({ applied: true, state: { active: 'idle' } });
    expect(counts.issue_refund).toBe(1);
    expect((await fork.events()).find((e) => e.type === 'tool.started')!.data).toMatchObject({ tool: 'issue_refund', args: { amount: 7 } });
    // The parent is untouched: same log, still waiting for its own approval.
    expect(await parent.events()).toEqual(log);
    expect((await parent.snapshot()).status).toBe('waiting');
  });

  it('forks at a state that invokes a call: the fork makes that call itself with its edited context and runs on', async () => {
    const { runtime, parent, log, counts, model } = await setup();
    const classifySeq = log.find((e) => e.type === 'state.changed' && JSON.stringify(e.data.state) === '{"active":"classify"}')!.seq;
    const fork = await runtime.forkSession(parent.id, classifySeq, { context: { lastMessage: 'where is my order A1001' } });
    const snapshot = await fork.snapshot();
    expect(snapshot).toMatchObject({ status: 'waiting', state: { active: 'idle' }, context: { intent: 'order_query', orderId: 'A1001' } });
    expect(model.counts.calls).toBe(3); // classify, extract and the reply: the fork's own calls
    expect(counts).toMatchObject({ resolve_user: 1, query_order: 1, trace_shipment: 1, issue_refund: 0 });
    expect((await fork.events()).find((e) => e.type === 'llm.started')!.data).toMatchObject({ callId: 'classify@1', kind: 'classify' });
  });

  it('keeps the link to its parent across later commits and a new runtime on the same SQLite file', async () => {
    const { db, runtime, parent, log, machine } = await setup();
    const fork = await runtime.forkSession(parent.id, seqOf(log, 'approval.requested'));
    const again = createRuntime({ machines: [machine], store: db.open() });
    expect(await again.session(fork.id).send({ type: 'REJECT', reason: 'not this time' })).toMatchObject({ applied: true });
    expect((await again.store.load(fork.id))!.fork).toEqual({ parentId: parent.id, forkedAt: seqOf(log, 'approval.requested') });
  });

  it('refuses a seq where a call was in flight with FORK_MID_CALL naming the call and where to fork instead', async () => {
    const { runtime, parent, log, store } = await setup();
    const inFlight = log.find((e) => e.type === 'tool.started' && e.data.tool === 'query_order')!;
    const before = (await store.listSessions()).sessions.length;
    const failure = await runtime.forkSession(parent.id, inFlight.seq).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: 'FORK_MID_CALL',
      details: {
        seq: inFlight.seq,
        calls: [{ callId: inFlight.data.callId, kind: 'tool', name: 'query_order' }],
        before: inFlight.seq - 1,
        after: inFlight.seq + 2,
      },
    });
    expect((await store.listSessions()).sessions).toHaveLength(before);
  });

  it('refuses a context patch that breaks the schema with FORK_CONTEXT_INVALID naming the field, and stores nothing', async () => {
    const { runtime, parent, log, store } = await setup();
    const at = seqOf(log, 'approval.requested');
    const before = (await store.listSessions()).sessions.length;
    await expect(
      runtime.forkSession(parent.id, at, { context: { order: { order_id: 'A1002', status: 'lost', total: 7 } } }),
    ).rejects.toMatchObject({
      code: 'FORK_CONTEXT_INVALID',
      details: { issues: [expect.objectContaining({ path: ['order', 'status'] })] },
    });
    await expect(runtime.forkSession(parent.id, at, { context: { nickname: 'x' } })).rejects.toMatchObject({
      code: 'FORK_CONTEXT_INVALID',
      details: { issues: [expect.objectContaining({ path: ['nickname'] })] },
    });
    await expect(runtime.forkSession(parent.id, at, JSON.parse('{"context":{"__proto__":{"polluted":true}}}'))).rejects.toMatchObject({
      code: 'FORK_CONTEXT_INVALID',
      details: { issues: [expect.objectContaining({ path: ['__proto__'] })] },
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await store.listSessions()).sessions).toHaveLength(before);
  });

  it('clears an optional field patched with null', async () => {
    const { runtime, parent, log } = await setup();
    const fork = await runtime.forkSession(parent.id, seqOf(log, 'approval.requested'), { context: { reply: null } });
    expect((await fork.snapshot()).context).not.toHaveProperty('reply');
  });

  it('refuses seqs without a state, past the end, after the end of the session, and a changed spec', async () => {
    const { db, runtime, parent, log, machine } = await setup();
    await expect(runtime.forkSession(parent.id, 1)).rejects.toMatchObject({ code: 'FORK_NO_STATE' });
    await expect(runtime.forkSession(parent.id, log.length + 1)).rejects.toMatchObject({
      code: 'INSPECT_SEQ_OUT_OF_RANGE',
      details: { lastSeq: log.length },
    });
    await expect(runtime.forkSession('nope', 2)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await parent.cancel('done with it');
    const cancelled = (await parent.events()).at(-1)!;
    await expect(runtime.forkSession(parent.id, cancelled.seq)).rejects.toMatchObject({ code: 'FORK_ENDED' });
    const changed = createRuntime({ machines: [{ ...machine, specHash: 'f'.repeat(64) }], store: db.open() });
    await expect(changed.forkSession(parent.id, 2)).rejects.toMatchObject({ code: 'SPEC_CHANGED' });
  });

  it('forks a state waiting on a timer: the timer starts anew in the fork with its full delay and fires there', async () => {
    const db = await sqliteFile();
    const clock = createVirtualClock(1_000_000);
    const machine = timedMachine(30_000);
    const runtime = createRuntime({ machines: [machine], store: db.open(), clock });
    const parent = await runtime.createSession(machine);
    await parent.send({ type: 'START' });
    const waiting = (await parent.events()).find((e) => e.type === 'state.changed' && e.data.state === 'waiting')!;
    await clock.advance(10_000);
    const fork = await runtime.forkSession(parent.id, waiting.seq);
    expect((await db.open().load(fork.id))!.timers).toEqual({ 'xstate.after.30000.timed.waiting': 1_010_000 + 30_000 });
    await clock.advance(20_000); // the parent's timer is due; the fork's has 10 s left
    expect((await parent.snapshot()).state).toBe('timed_out');
    expect((await fork.snapshot()).state).toBe('waiting');
    await clock.advance(10_000);
    expect(await fork.snapshot()).toMatchObject({ state: 'timed_out', status: 'done' });
  });
});
