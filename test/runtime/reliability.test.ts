import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMemoryStore,
  createRuntime,
  createScriptedProvider,
  defineTool,
  reexecuteSession,
  replaySession,
  type LlmProvider,
} from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { createVirtualClock, settle } from '@flowing/runtime';
import { childMachines } from '../helpers/child-machines.ts';
import { gateTool, refusalMachine, singleToolMachine } from '../helpers/runtime-machines.ts';

describe('B3: fuzzed events are refused with a code or applied per schema', () => {
  const hostileKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'type', 'text', 'reason', 'n');
  const value = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(fc.integer()),
    fc.object(),
  );
  const event = fc.oneof(
    fc.record(
      {
        type: fc.constantFrom('USER_MESSAGE', 'APPROVE', 'REJECT', 'CANCEL', 'NOPE', '__proto__', 'constructor', ''),
        text: value,
        reason: value,
      },
      { requiredKeys: ['type'] },
    ),
    fc.dictionary(hostileKey, value),
    fc.record({
      type: fc.constant('USER_MESSAGE'),
      text: fc.string({ minLength: 100_000, maxLength: 100_000 }).map((s) => s.slice(0, 100_000)),
    }),
    value,
  );

  it('never crashes, never changes the snapshot on refusal, never touches Object.prototype', async () => {
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
    const session = await runtime.createSession(orderSupport);
    const protoKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    await fc.assert(
      fc.asyncProperty(event, async (raw) => {
        const before = await session.snapshot();
        const result = await session.send(raw as never);
        const after = await session.snapshot();
        if (result.applied) {
          expect(raw).toMatchObject({ type: expect.stringMatching(/^(USER_MESSAGE|CANCEL)$/) });
        } else {
          expect(['UNKNOWN_EVENT', 'INVALID_PAYLOAD', 'NO_TRANSITION', 'GUARD_REJECTED', 'SESSION_FINISHED']).toContain(result.code);
          expect(after.context).toEqual(before.context);
          expect(after.state).toEqual(before.state);
        }
        expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoKeys);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 120 },
    );
    const events = await session.events();
    expect(events.every((e, i) => e.seq === i + 1)).toBe(true);
  });

  it('refuses a value that is not an event object with a code, in a running and in an ended session, also on a machine that invokes machines', async () => {
    const machines = childMachines();
    const runtime = createRuntime({ machines: [orderSupport, machines.desk, machines.billing], store: createMemoryStore() });
    const hostile = [null, undefined, 42, 'APPROVE', [], [{ type: 'APPROVE' }]];
    const ends: Record<string, { type: string; orderId?: string }[]> = {
      'order-support': [{ type: 'CANCEL' }],
      desk: [{ type: 'START', orderId: 'A1' }, { type: 'CANCEL' }],
    };
    for (const [machine, ending] of Object.entries(ends)) {
      const session = await runtime.createSession(machine);
      const before = await session.snapshot();
      for (const raw of hostile) {
        const result = await session.send(raw as never);
        expect(result, `${machine}: ${JSON.stringify(raw)}`).toMatchObject({ applied: false, code: 'INVALID_PAYLOAD' });
      }
      const after = await session.snapshot();
      expect([after.state, after.context]).toEqual([before.state, before.context]);
      // An ended session takes no event; what is not one is refused with a code there too, never thrown.
      for (const event of ending) expect(await session.send(event as never)).toMatchObject({ applied: true });
      for (const raw of hostile) {
        const result = await session.send(raw as never);
        expect(result, `${machine} ended: ${JSON.stringify(raw)}`).toMatchObject({ applied: false, code: expect.any(String) });
      }
    }
  });
});

describe('B6: hanging calls fail within their timeout with a coded error', () => {
  it('a hanging model call fails with LLM_TIMEOUT at its timeout', async () => {
    const clock = createVirtualClock();
    let aborted = false;
    const llm: LlmProvider = {
      ...createScriptedProvider(),
      classify: (_request, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason);
          }),
        ),
    };
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), llm, clock, limits: { llmTimeoutMs: 2_000 } });
    const session = await runtime.createSession(orderSupport);
    const start = clock.now();
    const result = session.send({ type: 'USER_MESSAGE', text: 'hello' });
    await clock.advance(1_999);
    expect(aborted).toBe(false);
    await clock.advance(1);
    expect(aborted).toBe(true);
    await result;
    const failed = (await session.events()).find((e) => e.type === 'llm.failed')!;
    expect(failed.data).toMatchObject({ kind: 'classify', error: { code: 'LLM_TIMEOUT' }, latencyMs: 2_000 });
    expect(failed.at - start).toBeLessThanOrEqual(2_000 + 1_000);
    expect((await session.snapshot()).context).toMatchObject({ error: 'LLM_TIMEOUT' });
  });

  it('a hanging tool fails with TOOL_TIMEOUT at its timeout, even when it ignores its signal', async () => {
    const clock = createVirtualClock();
    const deaf = defineTool({
      name: 'deaf',
      description: 'ignores aborts',
      input: z.object({}),
      output: z.object({}),
      timeoutMs: 3_000,
      idempotent: true,
      retries: 0,
      run: () => new Promise<Record<string, never>>(() => {}),
    });
    const machine = singleToolMachine(deaf);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore(), clock });
    const session = await runtime.createSession(machine);
    const result = session.send({ type: 'RUN', args: {} });
    await clock.advance(3_000);
    await result;
    const failed = (await session.events()).find((e) => e.type === 'tool.failed')!;
    expect(failed.data).toMatchObject({ error: { code: 'TOOL_TIMEOUT' }, durationMs: 3_000 });
  });
});

describe('C4: a second message while a run is active', () => {
  it('is queued by default and never interleaves with the running steps', async () => {
    const gate = gateTool();
    const machine = refusalMachine(gate.tool);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    const first = session.send({ type: 'GO', n: 1 });
    const second = session.send({ type: 'GO', n: 2 });
    await settle();
    expect(gate.state.calls).toBe(1);
    void gate.release();
    await first;
    await settle();
    expect(gate.state.calls).toBe(2);
    void gate.release();
    await second;
    const changes = (await session.events()).filter((e) => e.type === 'state.changed').map((e) => (e.data as { state: string }).state);
    expect(changes).toEqual(['idle', 'working', 'idle', 'working', 'idle']);
  });

  it('is refused with BUSY when the caller asks not to queue, and the run is not disturbed', async () => {
    const gate = gateTool();
    const machine = refusalMachine(gate.tool);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    const first = session.send({ type: 'GO', n: 1 });
    await settle();
    expect(await session.send({ type: 'GO', n: 2 }, { queue: false })).toMatchObject({ applied: false, code: 'BUSY' });
    void gate.release();
    expect(await first).toMatchObject({ applied: true, state: 'idle' });
    expect(gate.state.calls).toBe(1);
    expect((await session.snapshot()).context).toEqual({ n: 1 });
  });
});

describe('D8: a step that produces a context violating the spec', () => {
  it('is rejected with CONTEXT_INVALID; the stored snapshot stays the one before and stays usable', async () => {
    const loose = defineTool({
      name: 'loose',
      description: 'returns anything',
      input: z.object({}),
      output: z.unknown(),
      async run() {
        return 'not an object';
      },
    });
    const machine = singleToolMachine(loose);
    // The spec says `result` is an object; the hand-written machine assigns whatever the tool returns.
    const strict = { ...machine, contextFields: { ...machine.contextFields, result: { type: 'object' as const, optional: true } } };
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [strict], store });
    const session = await runtime.createSession(strict);
    const before = await store.load(session.id);
    const result = await session.send({ type: 'RUN', args: {} });
    expect(result).toMatchObject({ applied: false, code: 'CONTEXT_INVALID' });
    const after = await store.load(session.id);
    expect(after!.snapshot).toEqual(before!.snapshot);
    expect(after!.status).toBe('waiting');
    const events = await session.events();
    expect(events.find((e) => e.type === 'error')!.data).toMatchObject({ code: 'CONTEXT_INVALID', recoverable: true });
    expect(events.at(-1)!.data).toMatchObject({ code: 'CONTEXT_INVALID', event: 'RUN' });
    // Still loadable: a fresh runtime restores it and refuses a bad event the normal way.
    const again = createRuntime({ machines: [strict], store });
    expect(await again.session(session.id).send({ type: 'NOPE' } as never)).toMatchObject({ applied: false, code: 'UNKNOWN_EVENT' });
  });
});

describe('D8: invalid input at creation', () => {
  it('refuses to create a session whose first context breaks the spec, and stores nothing', async () => {
    const store = createMemoryStore();
    const runtime = createRuntime({ machines: [orderSupport], store });
    await expect(runtime.createSession(orderSupport, { userId: 42 })).rejects.toMatchObject({ code: 'CONTEXT_INVALID' });
    expect((await store.listSessions()).sessions).toEqual([]);
  });
});

describe('D11: replay a recorded session', () => {
  async function record() {
    const clock = createVirtualClock();
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), clock });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' }, { sessionId: 'replay-1', traceId: 'trace-1' });
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    await session.send({ type: 'APPROVE' });
    await session.send({ type: 'USER_MESSAGE', text: 'refund A1003 please' });
    await session.send({ type: 'APPROVE' });
    return { log: await session.events(), snapshot: await session.snapshot() };
  }

  it('reproduces the log and the final snapshot byte for byte', async () => {
    const recorded = await record();
    const replayed = await replaySession({ machine: orderSupport, log: recorded.log, clock: createVirtualClock() });
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(recorded.log));
    expect(JSON.stringify(replayed.snapshot)).toBe(JSON.stringify(recorded.snapshot));
  });

  it('names the first diverging event when something changed (NONDETERMINISM)', async () => {
    const recorded = await record();
    const changed = defineTool({
      ...orderSupport.tools.trace_shipment!,
      async run() {
        return { carrier: 'Other', location: 'Paris', eta: '2027-01-01' };
      },
    });
    const firstTrace = recorded.log.find((e) => e.type === 'tool.completed' && (e.data as { tool: string }).tool === 'trace_shipment')!;
    await expect(
      reexecuteSession({ machine: orderSupport, log: recorded.log, clock: createVirtualClock(), tools: { trace_shipment: changed } }),
    ).rejects.toMatchObject({ code: 'NONDETERMINISM', details: { seq: firstTrace.seq } });
  });
});
