import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, defineTool, type RuntimeEvent, type SessionStore } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { settle } from '@flowing/runtime';
import { guardedDoneMachine, quoteTool, startsWithCallMachine, throwingImplMachine } from '../helpers/runtime-failing-machines.ts';
import { gateTool, singleToolMachine } from '../helpers/runtime-machines.ts';
import { createRecordingStore } from '../helpers/runtime-store.ts';

/** Fails the test with a clear message instead of letting it run into vitest's timeout when a promise never settles. */
function settlesWithin<T>(promise: Promise<T>, ms = 2_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

function ofType(events: readonly RuntimeEvent[], type: string) {
  return events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);
}

describe('an invoke whose result or error no guarded branch takes (issue 8)', () => {
  it('refuses the result with GUARD_REJECTED, logs it and leaves the session in needs_attention instead of hanging', async () => {
    const { tool } = quoteTool();
    const machine = guardedDoneMachine(tool);
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    const result = await settlesWithin(session.send({ type: 'CHECK', amount: 500 }));
    expect(result).toMatchObject({ applied: true, status: 'needs_attention', state: 'checking' });
    const rejected = ofType(await session.events(), 'transition.rejected');
    expect(rejected).toEqual([
      expect.objectContaining({
        event: 'xstate.done.actor.checking',
        code: 'GUARD_REJECTED',
        states: ['checking'],
        details: expect.objectContaining({ callId: 'checking@2', output: { total: 500 } }),
      }),
    ]);
    const snapshot = await session.snapshot();
    expect(snapshot.status).toBe('needs_attention');
    expect(snapshot.error).toMatchObject({ code: 'GUARD_REJECTED', message: expect.stringContaining('matches no onDone branch') });
    expect(ofType(await session.events(), 'error')).toEqual([expect.objectContaining({ code: 'GUARD_REJECTED', recoverable: true })]);
  });

  it('answers later events at once with SESSION_NEEDS_ATTENTION, naming the reason', async () => {
    const { tool } = quoteTool();
    const machine = guardedDoneMachine(tool);
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    await settlesWithin(session.send({ type: 'CHECK', amount: 500 }));
    const later = await settlesWithin(session.send({ type: 'RESET' }));
    expect(later).toMatchObject({ applied: false, code: 'SESSION_NEEDS_ATTENTION', message: expect.stringContaining('GUARD_REJECTED') });
    const rejected = ofType(await session.events(), 'transition.rejected');
    expect(rejected.at(-1)).toMatchObject({ event: 'RESET', code: 'SESSION_NEEDS_ATTENTION' });
  });

  it('refuses an error that no guarded onError branch takes the same way, with the error in the details', async () => {
    const { tool } = quoteTool();
    const machine = guardedDoneMachine(tool);
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    const result = await settlesWithin(session.send({ type: 'CHECK', amount: 5, fail: true }));
    expect(result).toMatchObject({ applied: true, status: 'needs_attention' });
    const rejected = ofType(await session.events(), 'transition.rejected');
    expect(rejected).toEqual([
      expect.objectContaining({
        event: 'xstate.error.actor.checking',
        code: 'GUARD_REJECTED',
        details: expect.objectContaining({ error: { code: 'QUOTE_FAILED', message: 'the quote service said no' } }),
      }),
    ]);
    expect((await session.snapshot()).error).toMatchObject({ code: 'GUARD_REJECTED', message: expect.stringContaining('QUOTE_FAILED') });
  });

  it('is recoverable: the stored session has the call back in flight, so a resolved call result moves it on', async () => {
    const { tool, calls } = quoteTool();
    const machine = guardedDoneMachine(tool);
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine);
    await settlesWithin(session.send({ type: 'CHECK', amount: 500 }));
    // What a person's resolution writes: the call's result (here a corrected total) and the session running again.
    const data = store.exportData();
    const record = data.records.get(session.id)!;
    data.records.set(session.id, { ...record, status: 'running' });
    const entry = data.journal.get(session.id)!.get('checking@2')!;
    data.journal.get(session.id)!.set('checking@2', { ...entry, completed: { at: entry.startedAt, ok: true, output: { total: 80 } } });
    const again = createRuntime({ machines: [machine], store: createMemoryStore({ data }) });
    await settlesWithin(again.resume(session.id));
    const snapshot = await again.session(session.id).snapshot();
    expect(snapshot).toMatchObject({ status: 'waiting', state: 'approved', context: { total: 80 } });
    expect(calls).toHaveLength(1);
  });
});

describe('a guard or action that throws (issue 8)', () => {
  it('refuses the event with GUARD_THREW carrying the thrown message, not GUARD_REJECTED, and keeps the state', async () => {
    const machine = throwingImplMachine({ guard: true });
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    const result = await settlesWithin(session.send({ type: 'GO' }));
    expect(result).toMatchObject({
      applied: false,
      code: 'GUARD_THREW',
      message: expect.stringContaining('isAllowed is not implemented yet'),
    });
    expect((result as { message: string }).message).toContain("guard 'isAllowed'");
    const snapshot = await session.snapshot();
    expect(snapshot).toMatchObject({ status: 'waiting', state: 'idle' });
    expect(ofType(await session.events(), 'transition.rejected').at(-1)).toMatchObject({ event: 'GO', code: 'GUARD_THREW' });
    expect(await settlesWithin(session.send({ type: 'PING' }))).toMatchObject({ applied: true, state: 'idle' });
  });

  it('refuses the event with GUARD_THREW naming the transition when an inline (generated) guard throws', async () => {
    const machine = throwingImplMachine({ inlineGuard: true });
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    const result = await settlesWithin(session.send({ type: 'PING' }));
    expect(result).toMatchObject({ applied: false, code: 'GUARD_THREW' });
    expect((result as { message: string }).message).toBe(
      "the guard of PING in state 'throwing-impl.idle' threw: Cannot read properties of undefined (reading 'deep')",
    );
    expect(await session.snapshot()).toMatchObject({ status: 'waiting', state: 'idle', context: { pings: 0 } });
  });

  it("stops a generated machine's session in needs_attention with GUARD_THREW naming the guard when its parameterized guard throws on a call result", async () => {
    const odd = defineTool({
      ...orderSupport.tools.query_order!,
      output: z.any(),
      async run() {
        return null;
      },
    });
    const runtime = createRuntime({ machines: [orderSupport], tools: { query_order: odd } });
    const session = await runtime.createSession(orderSupport);
    const result = await settlesWithin(session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' }));
    expect(result).toMatchObject({ applied: true, status: 'needs_attention' });
    const snapshot = await session.snapshot();
    expect(snapshot.error).toMatchObject({
      code: 'GUARD_THREW',
      message: expect.stringContaining("guard 'fetchOrderDoneToTraceShipment'"),
    });
    expect(snapshot.error!.message).toContain('Cannot read properties of null');
    expect((await session.events()).at(-1)).toMatchObject({ type: 'error', data: { code: 'GUARD_THREW', recoverable: true } });
  });

  it('refuses the event with ACTION_THREW when a named action throws, and keeps the state', async () => {
    const machine = throwingImplMachine({ action: true });
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    const result = await settlesWithin(session.send({ type: 'GO' }));
    expect(result).toMatchObject({
      applied: false,
      code: 'ACTION_THREW',
      message: expect.stringContaining('notify is not implemented yet'),
    });
    expect(await session.snapshot()).toMatchObject({ status: 'waiting', state: 'idle' });
    expect(ofType(await session.events(), 'error').at(-1)).toMatchObject({ code: 'ACTION_THREW', recoverable: true });
  });

  it("stops the session in needs_attention with ACTION_THREW when an assignment throws on the machine's own event (a call result)", async () => {
    const { tool } = quoteTool();
    const machine = guardedDoneMachine(tool, { assignThrows: true });
    const runtime = createRuntime({ machines: [machine] });
    const session = await runtime.createSession(machine);
    const result = await settlesWithin(session.send({ type: 'CHECK', amount: 50 }));
    expect(result).toMatchObject({ applied: true, status: 'needs_attention' });
    const snapshot = await session.snapshot();
    expect(snapshot.status).toBe('needs_attention');
    expect(snapshot.error).toMatchObject({ code: 'ACTION_THREW', message: expect.stringContaining('total is not a number') });
    expect(ofType(await session.events(), 'error')).toEqual([expect.objectContaining({ code: 'ACTION_THREW', recoverable: true })]);
    expect(await settlesWithin(session.send({ type: 'RESET' }))).toMatchObject({ applied: false, code: 'SESSION_NEEDS_ATTENTION' });
  });

  it("settles createSession with a coded error when a guard of the initial state's eventless transition throws", async () => {
    const machine = throwingImplMachine({ initialGuard: true });
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [machine], store });
    const error = await settlesWithin(
      runtime.createSession(machine, undefined, { sessionId: 's-init' }).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toMatchObject({
      code: 'GUARD_THREW',
      message: expect.stringContaining('isReady is not implemented yet'),
      details: { sessionId: 's-init' },
    });
    // Stored and logged, so it can be inspected; it takes no events.
    const session = runtime.session('s-init');
    expect(await session.snapshot()).toMatchObject({ status: 'error', error: { code: 'GUARD_THREW' } });
    expect((await session.events()).map((e) => e.type)).toEqual(['session.started', 'error']);
    expect(await settlesWithin(session.send({ type: 'GO' }))).toMatchObject({ applied: false, code: 'SESSION_FINISHED' });
  });
});

describe('paths that used to never settle', () => {
  async function unclearChargeDump() {
    const runs = { count: 0 };
    const charge = defineTool({
      name: 'charge',
      description: 'moves money',
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      idempotent: false,
      async run() {
        runs.count++;
        return { ok: true };
      },
    });
    const machine = singleToolMachine(charge);
    const { store, dumps } = createRecordingStore();
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'RUN', args: {} });
    const dump = dumps.find((d) => [...(d.journal.get(session.id)?.values() ?? [])].some((e) => e.completed === undefined))!;
    expect(dump).toBeDefined();
    return { machine, dump, sessionId: session.id, runs };
  }

  it('refuses events with SESSION_NEEDS_ATTENTION once a resumed call has an unknown outcome, and never runs it again', async () => {
    const { machine, dump, sessionId, runs } = await unclearChargeDump();
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore({ data: dump }) });
    await settlesWithin(runtime.resume(sessionId));
    const session = runtime.session(sessionId);
    expect(await session.snapshot()).toMatchObject({ status: 'needs_attention', error: { code: 'TOOL_UNKNOWN_OUTCOME' } });
    const refused = await settlesWithin(session.send({ type: 'RUN', args: {} }));
    expect(refused).toMatchObject({
      applied: false,
      code: 'SESSION_NEEDS_ATTENTION',
      message: expect.stringContaining('TOOL_UNKNOWN_OUTCOME'),
    });
    expect(runs.count).toBe(1);
    expect((await session.events()).at(-1)).toMatchObject({
      type: 'transition.rejected',
      data: { event: 'RUN', code: 'SESSION_NEEDS_ATTENTION' },
    });
  });

  it('cancel settles while a resumed session stops on a call with an unknown outcome', async () => {
    const { machine, dump, sessionId, runs } = await unclearChargeDump();
    const inner = createMemoryStore({ data: dump });
    // Slow commits hold the resumed run open (stopped in needs_attention, its commit in flight) while cancel arrives.
    const store: SessionStore = {
      ...inner,
      async commit(request) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return inner.commit(request);
      },
    };
    const runtime = createRuntime({ machines: [machine], store });
    const resuming = runtime.resume(sessionId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await settlesWithin(runtime.session(sessionId).cancel('a person gave up'));
    await settlesWithin(resuming);
    expect(runs.count).toBe(1);
    expect((await runtime.session(sessionId).snapshot()).status).toBe('cancelled');
  });
});

describe('cancel during start', () => {
  for (const when of ['at once', 'once the first call runs'] as const) {
    it(`settles createSession and cancel when the session is cancelled ${when}, aborting the call`, async () => {
      const gate = gateTool();
      const machine = startsWithCallMachine(gate.tool);
      const runtime = createRuntime({ machines: [machine] });
      const creating = runtime.createSession(machine, undefined, { sessionId: 'starting' });
      if (when !== 'at once') await settle();
      await settlesWithin(runtime.session('starting').cancel('changed my mind'));
      const session = await settlesWithin(creating);
      expect(await session.snapshot()).toMatchObject({ status: 'cancelled' });
      if (when !== 'at once') expect(gate.state.signal?.aborted).toBe(true);
      expect((await session.events()).map((e) => e.type)).toContain('session.cancelled');
    });
  }
});

describe('a subscription whose stored events cannot be read', () => {
  it('is closed and told with SUBSCRIPTION_FAILED instead of waiting for ever', async () => {
    const machine = throwingImplMachine({});
    const inner = createMemoryStore();
    let readsFail = false;
    const store: SessionStore = {
      ...inner,
      async readEvents(sessionId, afterSeq) {
        if (readsFail) throw Object.assign(new Error('disk unplugged'), { code: 'STORE_UNAVAILABLE' });
        return inner.readEvents(sessionId, afterSeq);
      },
    };
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine);
    readsFail = true;
    const seen: number[] = [];
    const failed = new Promise<{ code: string; message: string }>((resolve) => {
      session.subscribe(0, (e) => seen.push(e.seq), resolve);
    });
    const error = await settlesWithin(failed);
    expect(error).toMatchObject({ code: 'SUBSCRIPTION_FAILED', message: expect.stringContaining('STORE_UNAVAILABLE: disk unplugged') });
    // Closed: later events are not delivered to it.
    readsFail = false;
    await session.send({ type: 'PING' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([]);
  });
});
