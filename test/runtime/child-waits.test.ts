import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRuntime, createVirtualClock, type Clock, type RuntimeEvent, type SessionStore } from '@flowing/runtime';
import { childMachines } from '../helpers/child-machines.ts';
import { createBackend, type StoreBackend } from '../helpers/stores.ts';

/** A runtime process on the SQLite file: `stop()` closes its store, as a process that exits would. */
function processOn(backend: StoreBackend, clock?: Clock) {
  const machines = childMachines();
  const store: SessionStore = backend.open();
  const runtime = createRuntime({ machines: [machines.desk, machines.billing], store, ...(clock ? { clock } : {}) });
  return { ...machines, runtime, stop: () => store.close?.() };
}

const waits = (events: readonly RuntimeEvent[]) => events.filter((e) => e.type === 'machine.waiting');

let backend: StoreBackend;
beforeEach(async () => {
  backend = await createBackend('sqlite');
});
afterEach(async () => {
  await backend.remove();
});

describe('a parent waiting on a child machine, across restarts', () => {
  it('logs machine.waiting once per wait: not again when it is restored or woken while the child still waits', async () => {
    const first = processOn(backend);
    const desk = await first.runtime.createSession('desk');
    expect(await desk.send({ type: 'START', orderId: 'A1' })).toMatchObject({ status: 'waiting', state: 'billing' });
    const childId = (await desk.snapshot()).waitingOn!.sessionId;
    // Woken in its turn with nothing changed in the child: an APPROVE the child refuses (an undeclared field).
    expect(await desk.send({ type: 'APPROVE', note: 'no such field' } as never)).toMatchObject({ applied: false, forwardedTo: childId });
    expect(waits(await desk.events())).toHaveLength(1);
    await first.stop();

    // A restart: the parent's run is restored from the file, its machine call attaches the child again.
    const second = processOn(backend);
    await second.runtime.resume(desk.id);
    expect(await second.runtime.session(desk.id).snapshot()).toMatchObject({ status: 'waiting', waitingOn: { sessionId: childId } });
    await second.stop();
    const third = processOn(backend);
    expect(await third.runtime.session(desk.id).send({ type: 'APPROVE' })).toMatchObject({ applied: true, forwardedTo: childId });
    const events = await third.runtime.session(desk.id).events();
    expect(waits(events)).toHaveLength(1);
    expect(waits(events)[0]!.data).toMatchObject({ childId, status: 'waiting', tool: 'pay' });
    expect(events.filter((e) => e.type === 'machine.done')).toHaveLength(1);
    await third.stop();
  });

  it('restored in a new process, the parent completes when its child, approved through its own id, completes', async () => {
    const clock = createVirtualClock();
    const first = processOn(backend, clock);
    const desk = await first.runtime.createSession('desk');
    await desk.send({ type: 'START', orderId: 'A1' });
    const childId = (await desk.snapshot()).waitingOn!.sessionId;
    await first.stop();
    await clock.advance(60_000);

    const second = processOn(backend, clock);
    // Nothing of the parent is loaded in this process: the child's end wakes it from the file.
    expect(await second.runtime.session(childId).send({ type: 'APPROVE' })).toMatchObject({ applied: true, status: 'done' });
    await vi.waitFor(async () => expect((await second.runtime.session(desk.id).snapshot()).status).toBe('done'), { timeout: 5_000 });
    expect(await second.runtime.session(desk.id).snapshot()).toMatchObject({ state: 'refunded', context: { refundId: 'r-1' } });
    expect(second.pay.paid).toEqual([{ amount: 42 }]);
    expect(first.pay.paid).toEqual([]);
    const events = await second.runtime.session(desk.id).events();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'machine.started')).toHaveLength(1);
    // The call's journal entry was read back: its duration counts from its start in the first process.
    expect(events.filter((e) => e.type === 'machine.done')).toMatchObject([
      { data: { childId, output: { refundId: 'r-1' }, durationMs: 60_000 } },
    ]);
    expect(waits(events)).toHaveLength(1);
    await second.stop();
  });
});
