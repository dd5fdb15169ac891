import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionAt } from '@flowing/protocol';
import {
  createMemoryStore,
  createRuntime,
  createVirtualClock,
  replaySession,
  type CommitRequest,
  type SessionStore,
} from '@flowing/runtime';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { loopMachine } from '../helpers/runtime-machines.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-log-bytes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** A SQLite store that counts the JSON it is asked to write (record, events and journal of every commit). */
function countingSqlite(name: string): { store: SessionStore; inner: SqliteStore; written: () => number; reset: () => void } {
  const inner = createSqliteStore({ file: join(dir, `${name}.db`) });
  let written = 0;
  const store: SessionStore = {
    ...inner,
    commit(request: CommitRequest) {
      written +=
        bytes(request.record) + request.events.reduce((s, e) => s + bytes(e), 0) + request.journal.reduce((s, j) => s + bytes(j), 0);
      return inner.commit(request);
    },
  };
  return { store, inner, written: () => written, reset: () => (written = 0) };
}

const MESSAGE = `where is my order A1001? ${'x'.repeat(200 * 1024)}`;

describe('what a session writes for a large message', () => {
  it('writes an applied 200 KB message about three times (event, context, snapshot), not eight', async () => {
    const { store, inner, written, reset } = countingSqlite('applied');
    const runtime = createRuntime({ machines: [orderSupport], store });
    const session = await runtime.createSession(orderSupport);
    reset();
    expect(await session.send({ type: 'USER_MESSAGE', text: MESSAGE })).toMatchObject({ applied: true, status: 'waiting' });
    // The payload of the event, the field it is assigned to once, and the stored snapshot: 3.0x, plus the other events.
    expect(written()).toBeLessThan(3.2 * MESSAGE.length);
    await inner.close();
  });

  it('keeps the log folding to the stored context when only the changed fields are logged', async () => {
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [orderSupport], store, clock: createVirtualClock() });
    const session = await runtime.createSession(orderSupport);
    for (const text of ['hello', 'where is my order A1001', 'refund order A1001 please'])
      expect(await session.send({ type: 'USER_MESSAGE', text })).toMatchObject({ applied: true });
    const events = await session.events();
    const changes = events.filter((e) => e.type === 'state.changed');
    expect(changes.filter((e) => 'context' in e.data)).toHaveLength(1); // the first; later ones are patches
    expect(changes.some((e) => 'contextPatch' in e.data)).toBe(true);
    expect(sessionAt(events, events.length).context).toEqual((await session.snapshot()).context);
    // Replay compares the logs with whole contexts, and still finds them identical.
    const replay = await replaySession({
      machine: orderSupport,
      log: events,
      journal: await store.readJournal(session.id),
      clock: createVirtualClock(),
    });
    expect(replay.snapshot.context).toEqual((await session.snapshot()).context);
  });

  it('logs the state a session went back to, so the fold of its log matches it after a refused runaway turn', async () => {
    const { definition } = loopMachine({ stepsPerTurn: 6 });
    const runtime = createRuntime({ machines: [definition], store: createMemoryStore() });
    const session = await runtime.createSession(definition);
    await session.send({ type: 'RUN', n: 2 });
    expect(await session.send({ type: 'RUN', n: 40 })).toMatchObject({ applied: false, code: 'STEP_LIMIT' });
    const events = await session.events();
    const snapshot = await session.snapshot();
    expect(sessionAt(events, events.length)).toMatchObject({ state: snapshot.state, context: snapshot.context });
  });

  it('logs a refused 250 KB event as a 512-character preview and the sha256 of its payload, never its body', async () => {
    const { store, inner, written, reset } = countingSqlite('refused');
    const runtime = createRuntime({ machines: [orderSupport], store, clock: createVirtualClock() });
    const session = await runtime.createSession(orderSupport);
    const event = { type: 'REJECT' as const, reason: `no${'y'.repeat(250 * 1024)}` };
    reset();
    expect(await session.send(event)).toMatchObject({ applied: false, code: 'NO_TRANSITION' });
    expect(written()).toBeLessThan(4_000);
    const rejected = (await inner.readEvents(session.id)).at(-1)!;
    // The payload as the runtime checked it (fields in its schema's order).
    const json = JSON.stringify({ reason: event.reason, type: 'REJECT' });
    expect(rejected.data).toMatchObject({
      event: 'REJECT',
      code: 'NO_TRANSITION',
      payloadPreview: json.slice(0, 512),
      payloadSha256: createHash('sha256').update(json).digest('hex'),
      payloadBytes: json.length,
    });
    expect(rejected.data).not.toHaveProperty('payload');
    // A small refused event is kept whole, so replay can send it again.
    await session.send({ type: 'REJECT', reason: 'short' });
    expect((await inner.readEvents(session.id)).at(-1)!.data).toMatchObject({ payload: { type: 'REJECT', reason: 'short' } });
    // Replay carries the refusal it cannot send again over from the recording.
    const log = await inner.readEvents(session.id);
    const replay = await replaySession({
      machine: orderSupport,
      log,
      journal: await inner.readJournal(session.id),
      clock: createVirtualClock(),
    });
    expect(replay.events).toHaveLength(log.length);
    await inner.close();
  });
});

describe('the per-session log quota (limits.maxLogBytes)', () => {
  it('refuses the event that would take the log past its quota with SESSION_LOG_FULL, writing nothing of it', async () => {
    const { store, inner } = countingSqlite('quota');
    const runtime = createRuntime({ machines: [orderSupport], store, limits: { maxLogBytes: 60_000 } });
    const session = await runtime.createSession(orderSupport);
    const message = (i: number) => `where is my order A1001? (${i}) ${'z'.repeat(10_000)}`;
    let refused: Record<string, unknown> | undefined;
    let applied = 0;
    for (let i = 0; i < 20 && !refused; i++) {
      const result = await session.send({ type: 'USER_MESSAGE', text: message(i) });
      if (result.applied) applied++;
      else refused = result as unknown as Record<string, unknown>;
    }
    expect(applied).toBeGreaterThan(0);
    expect(refused).toMatchObject({ applied: false, code: 'SESSION_LOG_FULL', details: { sessionId: session.id, maxLogBytes: 60_000 } });
    expect(refused!.message).toContain(`session '${session.id}'`);
    expect(refused!.message).toMatch(/holds \d+ bytes and its quota is 60000 bytes \(limits\.maxLogBytes\)/);

    // Nothing of the refused event is stored: no step of it, and the session is where the last applied one left it.
    const events = await inner.readEvents(session.id);
    expect(JSON.stringify(events)).not.toContain(`(${applied}) `);
    const stored = (await inner.load(session.id))!;
    expect(stored.logBytes).toBeLessThanOrEqual(60_000);
    // Every event is counted (journal entries once per write, so a little more).
    expect(stored.logBytes).toBeGreaterThanOrEqual(events.reduce((s, e) => s + bytes(e), 0));
    const snapshot = await session.snapshot();
    expect(snapshot.status).toBe('waiting');
    expect(snapshot.context).toMatchObject({ lastMessage: message(applied - 1) });
    expect(sessionAt(events, events.length).context).toEqual(snapshot.context);
    await inner.close();
  });

  it('refuses every event once the log is full, without writing anything', async () => {
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [orderSupport], store, limits: { maxLogBytes: 3_000 } });
    const session = await runtime.createSession(orderSupport);
    for (let i = 0; i < 5; i++) await session.send({ type: 'USER_MESSAGE', text: 'hello there' });
    const before = await store.readEvents(session.id);
    const result = await session.send({ type: 'USER_MESSAGE', text: 'hello again' });
    expect(result).toMatchObject({ applied: false, code: 'SESSION_LOG_FULL' });
    expect(await store.readEvents(session.id)).toHaveLength(before.length);
  });
});
