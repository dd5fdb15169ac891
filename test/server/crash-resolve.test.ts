import { afterEach, describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { defineMachine, defineTool, fromTool, type AnyMachineDefinition, type AnyTool } from '@flowing/runtime';
import { guardedDoneMachine, quoteTool } from '../helpers/runtime-failing-machines.ts';
import { defineTestMachine } from '../helpers/runtime-machines.ts';
import { startTestServer, type TestServer } from './harness.ts';

/**
 * POST /sessions/:id/resolve for every reason a session stops in needs_attention on a call: a result or error no
 * branch takes (GUARD_REJECTED), a guard or action that threw on the result (GUARD_THREW, ACTION_THREW). (The unknown
 * outcome of a non-idempotent call after a crash is covered in recovery.test.ts.)
 */
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The quote tool answering each call with the next total of `totals` (the last one repeats). */
function scriptedQuote(totals: number[], options: { idempotent?: boolean } = {}) {
  const calls: unknown[] = [];
  const tool = defineTool({
    ...quoteTool().tool,
    idempotent: options.idempotent ?? true,
    async run(input: { amount: number }) {
      calls.push(input);
      return { total: totals[Math.min(calls.length - 1, totals.length - 1)]! };
    },
  });
  return { tool, calls };
}

/** idle --CHECK--> checking (quote) --[isCheap]--> approved; `isCheap` throws while `impl.broken`, like a stub. */
function stubGuardMachine(quote: AnyTool, impl: { broken: boolean }): AnyMachineDefinition {
  const spec = {
    specVersion: 1,
    id: 'stub-guard',
    context: { total: { type: 'number', optional: true } },
    events: { CHECK: { amount: { type: 'number' } } },
    initial: 'idle',
    states: {
      idle: { on: { CHECK: 'checking' } },
      checking: {
        invoke: {
          tool: quote.name,
          input: { amount: 'event.amount' },
          onDone: [{ guard: 'isCheap', target: 'approved', assign: { total: 'output.total' } }],
          onError: 'idle',
        },
      },
      approved: {},
    },
  } as const;
  type Ev = { type: 'CHECK'; amount: number };
  const machine = setup({
    types: {} as { context: { total?: number }; events: Ev },
    actors: { [`tool.${quote.name}`]: fromTool(quote) },
    guards: {
      isCheap: () => {
        if (impl.broken) throw new Error('isCheap is not implemented yet');
        return true;
      },
    },
  }).createMachine({
    id: 'stub-guard',
    context: {},
    initial: 'idle',
    states: {
      idle: { on: { CHECK: { target: '#stub-guard.checking' } } },
      checking: {
        invoke: {
          id: 'checking',
          src: `tool.${quote.name}`,
          input: ({ event }) => ({ args: { amount: (event as Ev).amount } }),
          onDone: [
            {
              guard: 'isCheap',
              target: '#stub-guard.approved',
              actions: assign({ total: ({ event }) => (event.output as { total: number }).total }),
            },
          ],
          onError: { target: '#stub-guard.idle' },
        },
      },
      approved: {},
    },
  });
  return defineMachine({ ...defineTestMachine(spec as never, machine, [quote]), machine });
}

/** Creates a session, sends `event` and returns the session id and the call the session stopped on. */
async function stopOnCall(s: TestServer, machine: string, event: unknown): Promise<{ id: string; callId: string; code: string }> {
  const id = (await s.call('POST', '/sessions', { body: { machine } })).body.sessionId as string;
  const sent = await s.call('POST', `/sessions/${id}/events`, { body: event });
  expect(sent.body.status).toBe('needs_attention');
  const { events } = (await s.call('GET', `/sessions/${id}/events`)).body;
  const rejected = events.findLast((e: { type: string }) => e.type === 'transition.rejected');
  return { id, callId: rejected.data.details.callId, code: rejected.data.code };
}

const resolve = (s: TestServer, id: string, body: unknown) => s.call('POST', `/sessions/${id}/resolve`, { body });

describe('resolving a session stopped on a call result no branch takes (GUARD_REJECTED)', () => {
  it('delivers the result a person gives: the machine takes the onDone branch it fits, and the tool does not run again', async () => {
    const quote = scriptedQuote([150]);
    server = await startTestServer([guardedDoneMachine(quote.tool)]);
    const { id, callId, code } = await stopOnCall(server, 'guarded-done', { type: 'CHECK', amount: 150 });
    expect(code).toBe('GUARD_REJECTED');
    const resolved = await resolve(server, id, { callId, outcome: 'completed', output: { total: 90 }, note: 'agreed a discount' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'waiting', state: 'approved', context: { total: 90 }, error: null });
    expect(quote.calls).toHaveLength(1);
    const { events } = (await server.call('GET', `/sessions/${id}/events`)).body;
    expect(events.filter((e: { type: string }) => e.type === 'tool.completed').at(-1).data).toMatchObject({
      callId,
      resolvedBy: 'person',
      note: 'agreed a discount',
      output: { total: 90 },
    });
  });

  it('delivers a failure a person gives: the machine takes the onError branch for its code', async () => {
    const quote = scriptedQuote([150]);
    server = await startTestServer([guardedDoneMachine(quote.tool)]);
    const { id, callId } = await stopOnCall(server, 'guarded-done', { type: 'CHECK', amount: 150 });
    const resolved = await resolve(server, id, { callId, outcome: 'failed', error: { code: 'OTHER', message: 'priced by hand instead' } });
    expect(resolved.body).toMatchObject({ status: 'waiting', state: 'idle' });
    expect(quote.calls).toHaveLength(1);
  });

  it('runs an idempotent call again on retry, logged as a tool.retry by a person, and takes the branch its new result fits', async () => {
    const quote = scriptedQuote([150, 80]);
    server = await startTestServer([guardedDoneMachine(quote.tool)]);
    const { id, callId } = await stopOnCall(server, 'guarded-done', { type: 'CHECK', amount: 150 });
    const resolved = await resolve(server, id, { callId, outcome: 'retry' });
    expect(resolved.body).toMatchObject({ status: 'waiting', state: 'approved', context: { total: 80 } });
    expect(quote.calls).toHaveLength(2);
    const types = (await server.call('GET', `/sessions/${id}/events`)).body.events.map(
      (e: { type: string; data: { resolvedBy?: string } }) => (e.data.resolvedBy ? `${e.type} by person` : e.type),
    );
    expect(types.slice(types.indexOf('tool.retry by person'))).toEqual([
      'tool.retry by person',
      'tool.started',
      'tool.completed',
      'state.changed',
    ]);
  });

  it('stops again, visibly, when the given result fits no branch either', async () => {
    server = await startTestServer([guardedDoneMachine(scriptedQuote([150]).tool)]);
    const { id, callId } = await stopOnCall(server, 'guarded-done', { type: 'CHECK', amount: 150 });
    const resolved = await resolve(server, id, { callId, outcome: 'completed', output: { total: 500 } });
    expect(resolved.body).toMatchObject({ status: 'needs_attention', error: { code: 'GUARD_REJECTED' } });
    const again = await resolve(server, id, { callId, outcome: 'completed', output: { total: 100 } });
    expect(again.body).toMatchObject({ status: 'waiting', state: 'approved' });
  });

  it('refuses to retry a call that is not idempotent with 409 RESOLVE_RETRY_REFUSED, changing nothing stored', async () => {
    const quote = scriptedQuote([150], { idempotent: false });
    server = await startTestServer([guardedDoneMachine(quote.tool)]);
    const { id, callId } = await stopOnCall(server, 'guarded-done', { type: 'CHECK', amount: 150 });
    const before = await server.store.load(id);
    const refused = await resolve(server, id, { callId, outcome: 'retry' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('RESOLVE_RETRY_REFUSED');
    expect(await server.store.load(id)).toEqual(before);
    expect(quote.calls).toHaveLength(1);
  });
});

describe('resolving a session stopped by a guard or action that threw on a call result', () => {
  it('keeps the result when a named guard throws (GUARD_THREW), and delivers it again once the guard is fixed', async () => {
    const impl = { broken: true };
    const quote = scriptedQuote([40]);
    server = await startTestServer([stubGuardMachine(quote.tool, impl)]);
    const { id, callId, code } = await stopOnCall(server, 'stub-guard', { type: 'CHECK', amount: 40 });
    expect(code).toBe('GUARD_THREW');
    const view = (await server.call('GET', `/sessions/${id}`)).body;
    expect(view.error).toMatchObject({ code: 'GUARD_THREW', message: expect.stringContaining('isCheap is not implemented yet') });
    const { events } = (await server.call('GET', `/sessions/${id}/events`)).body;
    const recorded = events.findLast((e: { type: string }) => e.type === 'transition.rejected').data.details.output;
    expect(recorded).toEqual({ total: 40 });

    impl.broken = false; // the stub is implemented and deployed
    const resolved = await resolve(server, id, { callId, outcome: 'completed', output: recorded, note: 'isCheap implemented' });
    expect(resolved.body).toMatchObject({ status: 'waiting', state: 'approved', context: { total: 40 } });
    expect(quote.calls).toHaveLength(1);
  });

  it('stops on ACTION_THREW when the onDone assignment throws, and moves on with a result a person gives', async () => {
    const quote = scriptedQuote([50]);
    server = await startTestServer([guardedDoneMachine(quote.tool, { assignThrows: true })]);
    const { id, callId, code } = await stopOnCall(server, 'guarded-done', { type: 'CHECK', amount: 50 });
    expect(code).toBe('ACTION_THREW');
    // The assignment throws on every result, so the person fails the call instead; onError takes code OTHER.
    const resolved = await resolve(server, id, {
      callId,
      outcome: 'failed',
      error: { code: 'OTHER', message: 'the total cannot be stored' },
    });
    expect(resolved.body).toMatchObject({ status: 'waiting', state: 'idle' });
  });
});

describe('resolve when there is nothing to resolve', () => {
  it('answers 409 NO_UNRESOLVED_CALL for a session not in needs_attention, a call it did not stop on, and a call already resolved', async () => {
    server = await startTestServer([guardedDoneMachine(scriptedQuote([150]).tool)]);
    const waiting = (await server.call('POST', '/sessions', { body: { machine: 'guarded-done' } })).body.sessionId;
    const notParked = await resolve(server, waiting, { callId: 'checking@1', outcome: 'retry' });
    expect([notParked.status, notParked.body.code]).toEqual([409, 'NO_UNRESOLVED_CALL']);

    const { id, callId } = await stopOnCall(server, 'guarded-done', { type: 'CHECK', amount: 150 });
    const before = await server.store.load(id);
    const wrongCall = await resolve(server, id, { callId: 'checking@99', outcome: 'completed', output: { total: 1 } });
    expect([wrongCall.status, wrongCall.body.code]).toEqual([409, 'NO_UNRESOLVED_CALL']);
    expect(wrongCall.body.details.openCalls).toEqual([callId]);
    expect(await server.store.load(id)).toEqual(before);

    await resolve(server, id, { callId, outcome: 'completed', output: { total: 10 } });
    const twice = await resolve(server, id, { callId, outcome: 'completed', output: { total: 10 } });
    expect([twice.status, twice.body.code]).toEqual([409, 'NO_UNRESOLVED_CALL']);
    expect((await server.call('POST', '/sessions/nope/resolve', { body: { callId, outcome: 'retry' } })).status).toBe(404);
  });
});
