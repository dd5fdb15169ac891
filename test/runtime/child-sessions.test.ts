import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRuntime, type Runtime, type SessionStore } from '@flowing/runtime';
import { childMachines, deskMachine } from '../helpers/child-machines.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { createBackend, STORE_KINDS, type StoreBackend } from '../helpers/stores.ts';

/** Resolves once `check` holds (polled on events of the test, not a fixed pause). */
const waitFor = (check: () => boolean | Promise<boolean>) =>
  vi.waitFor(
    async () => {
      if (!(await check())) throw new Error('not yet');
    },
    { timeout: 5_000, interval: 5 },
  );

function setup(store?: SessionStore, limits?: { machineDepth?: number }) {
  const machines = childMachines();
  const runtime = createRuntime({
    machines: [machines.desk, machines.billing],
    ...(store ? { store } : {}),
    ...(limits ? { limits } : {}),
  });
  return { ...machines, runtime };
}

async function startDesk(runtime: Runtime, orderId = 'A1', broken?: boolean) {
  const desk = await runtime.createSession('desk');
  const result = await desk.send({ type: 'START', orderId, ...(broken ? { broken } : {}) });
  return { desk, result };
}

async function childOf(runtime: Runtime, parentId: string) {
  const view = await runtime.session(parentId).snapshot();
  expect(view.waitingOn).toBeDefined();
  return runtime.session(view.waitingOn!.sessionId);
}

describe('a state that invokes a machine runs a child session', () => {
  it('starts a child session that records its parent, and the parent waits while the child waits for a person', async () => {
    const { runtime } = setup();
    const { desk, result } = await startDesk(runtime);
    expect(result).toMatchObject({ applied: true, status: 'waiting', state: 'billing' });
    const view = await desk.snapshot();
    expect(view.waitingOn).toMatchObject({
      machineId: 'billing',
      state: 'billing',
      status: 'waiting',
      approval: { state: 'await_approval', tool: 'pay', args: { amount: 42 } },
    });
    const child = await runtime.session(view.waitingOn!.sessionId).snapshot();
    expect(child.invokedBy).toMatchObject({ sessionId: desk.id, state: 'billing', depth: 1 });
    const started = (await runtime.session(child.sessionId).events()).find((e) => e.type === 'session.started');
    expect(started?.data).toMatchObject({ machineId: 'billing', parentId: desk.id, parentState: 'billing', input: { orderId: 'A1' } });
    const parentLog = (await desk.events()).map((e) => e.type);
    expect(parentLog).toContain('machine.started');
    expect(parentLog).toContain('machine.waiting');
  });

  it("resolves onDone with the child's output when the child, approved through its own id, ends", async () => {
    const { runtime, pay } = setup();
    const { desk } = await startDesk(runtime);
    const child = await childOf(runtime, desk.id);
    const approved = await child.send({ type: 'APPROVE' });
    expect(approved).toMatchObject({ applied: true, status: 'done' });
    await waitFor(async () => (await desk.snapshot()).status === 'done');
    const view = await desk.snapshot();
    expect(view.state).toBe('refunded');
    expect(view.context).toMatchObject({ refundId: 'r-1' });
    expect(pay.paid).toEqual([{ amount: 42 }]);
    const done = (await desk.events()).find((e) => e.type === 'machine.done');
    expect(done?.data).toMatchObject({ childId: child.id, output: { refundId: 'r-1', amount: 42 } });
  });

  it("forwards an APPROVE sent to the parent's id to the child that waits for it, and the parent continues", async () => {
    const { runtime, pay } = setup();
    const { desk } = await startDesk(runtime);
    const child = await childOf(runtime, desk.id);
    const approved = await desk.send({ type: 'APPROVE' });
    expect(approved).toMatchObject({ applied: true, forwardedTo: child.id });
    const view = await desk.snapshot();
    expect(view).toMatchObject({ status: 'done', state: 'refunded', context: { refundId: 'r-1' } });
    expect(pay.paid).toEqual([{ amount: 42 }]);
    expect((await child.snapshot()).status).toBe('done');
    const decided = (await child.events()).find((e) => e.type === 'approval.decided');
    expect(decided?.data).toMatchObject({ decision: 'approved', tool: 'pay' });
  });

  it('answers an approval repeated through the parent after the child ended: the same id as a duplicate, a new one as decided', async () => {
    const { runtime, pay } = setup();
    const { desk } = await startDesk(runtime);
    const child = await childOf(runtime, desk.id);
    const first = await desk.send({ type: 'APPROVE' }, { eventId: 'approve-1' });
    expect(first).toMatchObject({ applied: true, forwardedTo: child.id });
    expect(await desk.snapshot()).toMatchObject({ status: 'done', state: 'refunded' });
    // The same id again, through the parent: the child that took it answers it as a duplicate, as it does sent directly.
    const again = await desk.send({ type: 'APPROVE' }, { eventId: 'approve-1' });
    const direct = await child.send({ type: 'APPROVE' }, { eventId: 'approve-1' });
    expect(again).toMatchObject({ applied: true, duplicate: true, forwardedTo: child.id, status: 'done' });
    expect(direct).toMatchObject({ applied: true, duplicate: true, status: 'done' });
    // A new decision through the parent names the child whose approval was decided.
    for (const event of [{ type: 'APPROVE' }, { type: 'REJECT' }] as const) {
      for (const options of [{}, { eventId: `late-${event.type}` }]) {
        const late = await desk.send(event, options);
        expect(late).toMatchObject({
          applied: false,
          code: 'APPROVAL_ALREADY_DECIDED',
          details: { childId: child.id, machineId: 'billing', decision: 'approved' },
        });
        expect(late.applied === false && late.message).toContain(`its child ${child.id} (machine 'billing', state 'await_approval'`);
      }
    }
    expect(pay.paid).toEqual([{ amount: 42 }]);
    const rejected = (await desk.events()).filter((e) => e.type === 'transition.rejected').map((e) => (e.data as { code?: string }).code);
    expect(rejected).toEqual(Array(4).fill('APPROVAL_ALREADY_DECIDED'));
  });

  it("takes the branch a REJECT forwarded through the parent leads to, from the child's output", async () => {
    const { runtime, pay } = setup();
    const { desk } = await startDesk(runtime);
    await desk.send({ type: 'REJECT' });
    expect(await desk.snapshot()).toMatchObject({ status: 'done', state: 'declined' });
    expect(pay.paid).toEqual([]);
  });

  it("resolves onError with the child's error when the child session fails", async () => {
    const { runtime } = setup();
    const { desk } = await startDesk(runtime, 'A1', true);
    const view = await desk.snapshot();
    expect(view).toMatchObject({ status: 'done', state: 'failed' });
    const failed = (await desk.events()).find((e) => e.type === 'machine.failed');
    expect(failed?.data).toMatchObject({ machine: 'billing', error: { code: 'MACHINE_THREW' } });
    const child = await runtime.session(failed!.data.childId as string).snapshot();
    expect(child.status).toBe('error');
    expect((view.context as { error?: string }).error).toBe('MACHINE_THREW');
  });

  it('cancels the child when the parent is cancelled', async () => {
    const { runtime, pay } = setup();
    const { desk } = await startDesk(runtime);
    const child = await childOf(runtime, desk.id);
    await desk.cancel('the customer left');
    expect((await desk.snapshot()).status).toBe('cancelled');
    expect((await child.snapshot()).status).toBe('cancelled');
    const cancelled = (await child.events()).find((e) => e.type === 'session.cancelled');
    expect(cancelled?.data.reason).toMatch(new RegExp(`its parent ${desk.id} was cancelled`));
    expect(pay.paid).toEqual([]);
  });

  it('cancels the child when the parent leaves the invoking state', async () => {
    const { runtime } = setup();
    const { desk } = await startDesk(runtime);
    const child = await childOf(runtime, desk.id);
    expect(await desk.send({ type: 'CANCEL' })).toMatchObject({ applied: true, state: 'stopped' });
    await waitFor(async () => (await child.snapshot()).status === 'cancelled');
  });

  it('cancels a child that is still running its first steps when the parent is cancelled', async () => {
    const { runtime, lookup } = setup();
    lookup.state.hold = true;
    const desk = await runtime.createSession('desk');
    const sending = desk.send({ type: 'START', orderId: 'A1' });
    await waitFor(() => lookup.state.calls === 1);
    await desk.cancel('stop');
    await sending;
    const childId = (await desk.events()).find((e) => e.type === 'machine.started')!.data.childId as string;
    expect((await runtime.session(childId).snapshot()).status).toBe('cancelled');
  });
});

describe('the depth of a tree of child sessions is bounded', () => {
  it('fails a machine call deeper than limits.machineDepth with MACHINE_DEPTH_EXCEEDED and starts no session', async () => {
    const { runtime } = setup(undefined, { machineDepth: 0 });
    const { desk } = await startDesk(runtime);
    expect(await desk.snapshot()).toMatchObject({ status: 'done', state: 'failed', context: { error: 'MACHINE_DEPTH_EXCEEDED' } });
    const failed = (await desk.events()).find((e) => e.type === 'machine.failed');
    expect(await runtime.store.load(failed!.data.childId as string)).toBeUndefined();
  });

  it('stops a machine that invokes itself at the default depth of 8', async () => {
    const loop = deskMachine({ id: 'loop', child: 'loop', auto: true });
    const runtime = createRuntime({ machines: [loop] });
    const root = await runtime.createSession('loop', { orderId: 'A1' });
    const view = await root.snapshot();
    expect(view).toMatchObject({ status: 'done', state: 'declined' });
    let id = root.id;
    let depth = 0;
    for (;;) {
      const started = (await runtime.session(id).events()).find((e) => e.type === 'machine.started');
      if (!started) break;
      id = started.data.childId as string;
      depth++;
    }
    expect(depth).toBe(8);
    const deepest = (await runtime.session(id).events()).find((e) => e.type === 'machine.failed');
    expect(deepest?.data).toMatchObject({ error: { code: 'MACHINE_DEPTH_EXCEEDED' } });
    expect((await runtime.session(id).snapshot()).invokedBy?.depth).toBe(8);
  });
});

describe('a parent restarted mid-child continues with the same child', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    await redis?.stop();
  });

  for (const kind of STORE_KINDS) {
    describe(kind, () => {
      let backend: StoreBackend;
      beforeAll(async () => {
        backend = await createBackend(kind, redis);
      });
      afterAll(async () => {
        await backend.remove();
      });

      it('approves through the parent on a new runtime: the child finishes once and the parent continues', async () => {
        const first = setup(backend.open());
        const { desk } = await startDesk(first.runtime);
        const childId = (await first.runtime.session(desk.id).snapshot()).waitingOn!.sessionId;
        // A new runtime on the same store, as after a restart: nothing lives in memory but the store.
        const second = setup(backend.open());
        const result = await second.runtime.session(desk.id).send({ type: 'APPROVE' });
        expect(result).toMatchObject({ applied: true, forwardedTo: childId });
        expect(await second.runtime.session(desk.id).snapshot()).toMatchObject({ status: 'done', state: 'refunded' });
        expect(second.pay.paid).toEqual([{ amount: 42 }]);
        expect(first.pay.paid).toEqual([]);
        const started = (await second.runtime.session(desk.id).events()).filter((e) => e.type === 'machine.started');
        expect(started).toHaveLength(1);
      });

      it("approved through the child's id on another runtime: that runtime wakes the parent, which finishes", async () => {
        const first = setup(backend.open());
        const { desk } = await startDesk(first.runtime);
        const childId = (await first.runtime.session(desk.id).snapshot()).waitingOn!.sessionId;
        const second = setup(backend.open());
        expect(await second.runtime.session(childId).send({ type: 'APPROVE' })).toMatchObject({ applied: true, status: 'done' });
        await waitFor(async () => (await second.runtime.session(desk.id).snapshot()).status === 'done');
        expect(await first.runtime.session(desk.id).snapshot()).toMatchObject({ state: 'refunded', context: { refundId: 'r-1' } });
        expect(second.pay.paid).toEqual([{ amount: 42 }]);
      });

      if (kind !== 'redis') {
        it('resumes a parent stopped while its child was running: it finds the child again instead of starting another', async () => {
          const first = setup(backend.open());
          first.lookup.state.hold = true;
          const desk = await first.runtime.createSession('desk');
          void desk.send({ type: 'START', orderId: 'A2' });
          await waitFor(() => first.lookup.state.calls === 1);
          // Stopped once the child is stored mid-run: its first tool call is in flight.
          await waitFor(async () => (await first.runtime.store.load(`${desk.id}_billing_2`)) !== undefined);
          const second = setup(backend.open());
          await second.runtime.resume(desk.id);
          const view = await second.runtime.session(desk.id).snapshot();
          expect(view).toMatchObject({ status: 'waiting', state: 'billing', waitingOn: { status: 'waiting' } });
          await second.runtime.session(desk.id).send({ type: 'APPROVE' });
          expect(await second.runtime.session(desk.id).snapshot()).toMatchObject({ status: 'done', state: 'refunded' });
          expect(second.pay.paid).toEqual([{ amount: 42 }]);
          const started = (await second.runtime.session(desk.id).events()).filter((e) => e.type === 'machine.started');
          expect(started).toHaveLength(1);
          first.lookup.release();
        });
      }
    });
  }
});
