import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, defineTool, EVENT_IDS_KEPT } from '@flowing/runtime';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { createBackend, STORE_KINDS, type StoreBackend, type StoreKind } from '../helpers/stores.ts';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** An instant `wait` tool that counts its runs: each applied GO runs it once. */
function countingWait() {
  const runs = { count: 0 };
  const tool = defineTool({
    name: 'wait',
    description: 'returns at once',
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    async run() {
      runs.count++;
      return { ok: true };
    },
  });
  return { tool, runs };
}

describe.each(STORE_KINDS)('event ids (idempotent sends): %s store', (kind: StoreKind) => {
  let backend: StoreBackend;
  beforeAll(async () => {
    backend = await createBackend(kind, redis);
  });
  afterAll(async () => {
    await backend?.remove();
  });

  function runtimeOn() {
    const wait = countingWait();
    const machine = refusalMachine(wait.tool);
    return { runtime: createRuntime({ machines: [machine], store: backend.open() }), machine, runs: wait.runs };
  }

  it('answers a repeated event id with the first result and applies the event once', async () => {
    const { runtime, machine, runs } = runtimeOn();
    const session = await runtime.createSession(machine);
    const first = await session.send({ type: 'GO', n: 3 }, { eventId: 'retry-1' });
    expect(first).toMatchObject({ applied: true, state: 'idle' });
    const logged = (await session.events()).length;
    const again = await session.send({ type: 'GO', n: 3 }, { eventId: 'retry-1' });
    expect(again).toEqual({ ...first, duplicate: true });
    expect(runs.count).toBe(1);
    expect((await session.events()).length).toBe(logged);
  });

  it('answers a repeated refusal as it was, without logging it again', async () => {
    const { runtime, machine } = runtimeOn();
    const session = await runtime.createSession(machine);
    const first = await session.send({ type: 'PING' }, { eventId: 'ping-1' });
    expect(first).toMatchObject({ applied: false, code: 'NO_TRANSITION' });
    const logged = (await session.events()).length;
    expect(await session.send({ type: 'PING' }, { eventId: 'ping-1' })).toEqual(first);
    expect((await session.events()).length).toBe(logged);
  });

  it('refuses an id sent before with another event with IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const { runtime, machine, runs } = runtimeOn();
    const session = await runtime.createSession(machine);
    await session.send({ type: 'GO', n: 3 }, { eventId: 'k' });
    const before = await session.snapshot();
    const reused = await session.send({ type: 'GO', n: 4 }, { eventId: 'k' });
    expect(reused).toMatchObject({ applied: false, code: 'IDEMPOTENCY_KEY_REUSED', details: { eventId: 'k' } });
    expect(await session.snapshot()).toEqual(before);
    expect(runs.count).toBe(1);
  });

  it('remembers ids across runtimes on the same store (another process, a restart)', async () => {
    const a = runtimeOn();
    const session = await a.runtime.createSession(a.machine);
    const first = await session.send({ type: 'GO', n: 5 }, { eventId: 'across' });
    const b = runtimeOn();
    const again = await b.runtime.session(session.id).send({ type: 'GO', n: 5 }, { eventId: 'across' });
    expect(again).toEqual({ ...first, duplicate: true });
    expect(a.runs.count + b.runs.count).toBe(1);
  });

  it(`keeps the last ${EVENT_IDS_KEPT} ids of a session: an older one is applied again`, async () => {
    const { runtime, machine, runs } = runtimeOn();
    const session = await runtime.createSession(machine);
    for (let i = 0; i <= EVENT_IDS_KEPT; i++) await session.send({ type: 'GO', n: 1 }, { eventId: `id-${i}` });
    expect(runs.count).toBe(EVENT_IDS_KEPT + 1);
    expect(await session.send({ type: 'GO', n: 1 }, { eventId: `id-${EVENT_IDS_KEPT}` })).toMatchObject({ duplicate: true });
    expect(runs.count).toBe(EVENT_IDS_KEPT + 1);
    expect(await session.send({ type: 'GO', n: 1 }, { eventId: 'id-0' })).not.toHaveProperty('duplicate');
    expect(runs.count).toBe(EVENT_IDS_KEPT + 2);
  });
});

describe('event ids: atomic with the event they came with', () => {
  it('stores the id by the commit that logs the event, so after a crash mid-send the retry applies nothing', async () => {
    const gate = gateTool();
    const machine = refusalMachine(gate.tool);
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine);
    void session.send({ type: 'GO', n: 2 }, { eventId: 'mid-send' });
    // The tool running is the sign the GO transition was taken; the commit of that step follows at once.
    await vi.waitFor(() => expect(gate.state.calls).toBe(1));
    await vi.waitFor(async () => expect((await store.load(session.id))?.eventIds?.map((e) => e.id)).toEqual(['mid-send']));
    const stored = await store.load(session.id);
    const started = (await store.readEvents(session.id)).find((e) => e.type === 'state.changed' && e.data.event === 'GO');
    expect(stored?.eventIds?.[0]).toMatchObject({ id: 'mid-send', seq: started?.seq });
    // The process dies here: a new one on what the store holds gets the retry.
    const after = createRuntime({ machines: [machine], store: createMemoryStore({ data: store.exportData() }) });
    const retry = await after.session(session.id).send({ type: 'GO', n: 2 }, { eventId: 'mid-send' });
    expect(retry).toMatchObject({ applied: true, duplicate: true });
    expect(retry.applied && retry.events[0]?.seq).toBe(started?.seq);
    await gate.release();
  });

  it('refuses an id that is not 1-128 printable ASCII characters with INVALID_EVENT_ID and logs nothing', async () => {
    const machine = refusalMachine(countingWait().tool);
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    const logged = (await session.events()).length;
    for (const eventId of ['', 'has space', 'x'.repeat(129), 'é']) {
      expect(await session.send({ type: 'GO', n: 1 }, { eventId }), eventId).toMatchObject({ applied: false, code: 'INVALID_EVENT_ID' });
    }
    expect((await session.events()).length).toBe(logged);
  });
});
