import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, type MemoryStoreData, type Runtime } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { countingTools } from '../helpers/runtime-counting.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { createRecordingStore } from '../helpers/runtime-store.ts';
import { createBackend } from '../helpers/stores.ts';

const REFUND = 'I want a refund for A1002';
/** Another version of order-support whose `userId` is a number now: no stored session's context fits it. */
const retypedUserId = {
  ...orderSupport,
  specHash: 'another-hash',
  contextFields: { ...orderSupport.contextFields, userId: { type: 'number' as const } },
};
const QUERY = 'where is my order A1001';

/** Drives a session of order-support to the end of the scenario, from wherever it stands. */
async function drive(runtime: Runtime, sessionId: string, message: string) {
  const session = runtime.session(sessionId);
  for (let i = 0; i < 4; i++) {
    const snapshot = await session.snapshot();
    if (snapshot.status !== 'waiting') return snapshot;
    const context = snapshot.context as { lastMessage?: string; refundId?: string; reply?: string };
    const state = (snapshot.state as { active?: string }).active;
    if (state === 'await_approval') await session.send({ type: 'APPROVE' });
    else if (state === 'idle' && context.lastMessage === undefined) await session.send({ type: 'USER_MESSAGE', text: message });
    else return snapshot;
  }
  return session.snapshot();
}

async function recordRun(message: string) {
  const { store, dumps } = createRecordingStore();
  const { tools, counts } = countingTools(orderSupport.tools, { delayMs: 1 });
  const runtime = createRuntime({ machines: [orderSupport], store, tools });
  const session = await runtime.createSession(orderSupport);
  const final = await drive(runtime, session.id, message);
  return { sessionId: session.id, dumps, counts, final };
}

/** Tool calls the crashed process may have made before dump k: those whose `started` record it wrote. */
function startedIn(dump: MemoryStoreData, sessionId: string) {
  const out: Record<string, number> = {};
  for (const entry of dump.journal.get(sessionId)?.values() ?? []) if (entry.kind === 'tool') out[entry.name] = (out[entry.name] ?? 0) + 1;
  return out;
}

describe('resume from every point of an order-support run', () => {
  for (const [label, message] of [
    ['refund with approval', REFUND],
    ['order query', QUERY],
  ] as const) {
    it(`${label}: no call is made twice, a refund is never paid twice, an unclear refund waits for a person`, async () => {
      const original = await recordRun(message);
      expect(original.final.status).toBe('waiting');
      let unclear = 0;
      for (let k = 1; k <= original.dumps.length; k++) {
        const dump = original.dumps[k - 1]!;
        const { tools, counts } = countingTools(orderSupport.tools, { delayMs: 1 });
        const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore({ data: dump }), tools });
        await runtime.resume(original.sessionId);
        const final = await drive(runtime, original.sessionId, message);
        const before = startedIn(dump, original.sessionId);
        const journal = [...(await runtime.store.readJournal(original.sessionId))];
        const dumpRefund = [...(dump.journal.get(original.sessionId)?.values() ?? [])].find((e) => e.name === 'issue_refund');
        const where = `crash after write ${k} of ${original.dumps.length}`;
        // The non-idempotent refund: at most one payment across the crashed and the resumed process.
        expect((before.issue_refund ?? 0) + counts.issue_refund!, where).toBeLessThanOrEqual(1);
        if (dumpRefund && !dumpRefund.completed) {
          unclear++;
          expect(final.status, where).toBe('needs_attention');
          expect(counts.issue_refund, where).toBe(0);
          const events = await runtime.store.readEvents(original.sessionId);
          expect(
            events.filter((e) => e.type === 'tool.unknown_outcome'),
            where,
          ).toHaveLength(1);
        } else {
          expect(final.status, where).toBe('waiting');
          expect(final.context, where).toEqual(original.final.context);
        }
        // Completed calls are delivered from the journal, never fetched again.
        for (const entry of dump.journal.get(original.sessionId)?.values() ?? []) {
          if (entry.completed && entry.kind === 'tool') expect(counts[entry.name], `${where}: ${entry.key}`).toBe(0);
        }
        // Every call key completes at most once, and the log stays gapless.
        const completions = (await runtime.store.readEvents(original.sessionId))
          .filter((e) => e.type === 'tool.completed')
          .map((e) => (e.data as { callId: string }).callId);
        expect(new Set(completions).size, where).toBe(completions.length);
        const events = await runtime.store.readEvents(original.sessionId);
        expect(
          events.every((e, i) => e.seq === i + 1),
          where,
        ).toBe(true);
        // The journal holds one refund entry at most: a resume never opens a second call for the same payment.
        expect(journal.filter((e) => e.name === 'issue_refund').length, where).toBeLessThanOrEqual(1);
      }
      expect(original.dumps.length).toBeGreaterThanOrEqual(5);
      expect(unclear).toBe(message === REFUND ? 1 : 0);
    });
  }

  it('D4: a snapshot persisted while a tool is pending resumes from the journal without calling the tool again', async () => {
    const original = await recordRun(REFUND);
    // The write where the refund's result is journaled but the machine has not yet moved on.
    const k = original.dumps.findIndex((dump) => {
      const entry = [...(dump.journal.get(original.sessionId)?.values() ?? [])].find((e) => e.name === 'issue_refund');
      const record = dump.records.get(original.sessionId)!;
      return entry?.completed !== undefined && JSON.stringify((record.snapshot as { value: unknown }).value) === '{"active":"refund"}';
    });
    expect(k).toBeGreaterThanOrEqual(0);
    const { tools, counts } = countingTools(orderSupport.tools);
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore({ data: original.dumps[k]! }), tools });
    await runtime.resume(original.sessionId);
    expect(original.counts.issue_refund).toBe(1);
    expect(counts.issue_refund).toBe(0);
    expect((await runtime.session(original.sessionId).snapshot()).context).toEqual(original.final.context);
  });

  it('re-runs an idempotent call that started but never completed', async () => {
    const original = await recordRun(QUERY);
    const k = original.dumps.findIndex((dump) => {
      const entry = dump.journal.get(original.sessionId)?.get('fetch_order@5');
      return entry !== undefined && entry.completed === undefined;
    });
    const { tools, counts } = countingTools(orderSupport.tools, { delayMs: 1 });
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore({ data: original.dumps[k]! }), tools });
    await runtime.resume(original.sessionId);
    expect(counts.query_order).toBe(1);
    const started = (await runtime.store.readEvents(original.sessionId)).filter(
      (e) => e.type === 'tool.started' && (e.data as { callId: string }).callId === 'fetch_order@5',
    );
    expect(started.map((e) => (e.data as { resumed: boolean }).resumed)).toEqual([false, true]);
  });

  it('continues a session stored from another version whose states and context fit it, logging session.migrated', async () => {
    const original = await recordRun(QUERY);
    const changed = { ...orderSupport, specHash: 'another-hash' };
    const runtime = createRuntime({ machines: [changed], store: createMemoryStore({ data: original.dumps.at(-1)! }) });
    await runtime.resume(original.sessionId);
    const migrated = (await runtime.store.readEvents(original.sessionId)).filter((e) => e.type === 'session.migrated');
    expect(migrated.map((e) => e.data)).toEqual([
      expect.objectContaining({ fromVersion: orderSupport.specHash, toVersion: 'another-hash', hook: false }),
    ]);
    expect((await runtime.store.load(original.sessionId))?.specHash).toBe('another-hash');
  });

  it('refuses to resume a session stored from another version whose context does not fit it', async () => {
    const original = await recordRun(QUERY);
    const runtime = createRuntime({ machines: [retypedUserId], store: createMemoryStore({ data: original.dumps.at(-1)! }) });
    await expect(runtime.resume(original.sessionId)).rejects.toMatchObject({
      code: 'SPEC_CHANGED',
      details: { reasons: [{ code: 'STALE_CONTEXT_INVALID', field: 'userId' }] },
    });
  });
});

describe('a session with a call in flight when the machine changed', () => {
  it('is listed stale when the invoke of that call changed, and continues when only another part changed', async () => {
    const original = await recordRun(QUERY);
    const dump = original.dumps.find((d) => {
      const entry = d.journal.get(original.sessionId)?.get('fetch_order@5');
      return entry !== undefined && entry.completed === undefined;
    })!;
    const retooled = {
      ...orderSupport,
      specHash: 'another-hash',
      invokes: { ...orderSupport.invokes, fetch_order: { ...orderSupport.invokes.fetch_order!, tool: 'trace_shipment' } },
    };
    const changed = createRuntime({ machines: [retooled], store: createMemoryStore({ data: dump }) });
    const stale = await changed.staleSessions();
    expect(stale).toHaveLength(1);
    expect(stale[0]!.stale.reasons).toEqual([expect.objectContaining({ code: 'STALE_CALL_IN_FLIGHT', state: 'fetch_order' })]);
    await expect(changed.resume(original.sessionId)).rejects.toMatchObject({ code: 'SPEC_CHANGED' });

    const { tools, counts } = countingTools(orderSupport.tools);
    const same = createRuntime({
      machines: [{ ...orderSupport, specHash: 'another-hash' }],
      store: createMemoryStore({ data: dump }),
      tools,
    });
    expect(await same.staleSessions()).toEqual([]);
    await same.resume(original.sessionId);
    expect(counts.query_order).toBe(1);
    expect((await same.session(original.sessionId).snapshot()).status).toBe('waiting');
  });
});

describe('D10 on the durable stores: a session stored from another version of the spec', () => {
  let redis: TestRedis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it.each(['sqlite', 'redis'] as const)(
    'is refused with SPEC_CHANGED by a process running the changed spec, and left as stored (%s)',
    async (kind) => {
      const backend = await createBackend(kind, redis);
      try {
        const before = createRuntime({ machines: [orderSupport], store: backend.open(), warmSessions: 0 });
        const session = await before.createSession(orderSupport);
        const stored = await backend.open().load(session.id);
        // A new process (its own connection) serving a changed version of the machine.
        const after = createRuntime({ machines: [retypedUserId], store: backend.open() });
        await expect(after.resume(session.id)).rejects.toMatchObject({ code: 'SPEC_CHANGED' });
        await expect(after.session(session.id).send({ type: 'USER_MESSAGE', text: 'hello' })).rejects.toMatchObject({
          code: 'SPEC_CHANGED',
        });
        expect(await backend.open().load(session.id)).toEqual(stored);
      } finally {
        await backend.remove();
      }
    },
  );
});
