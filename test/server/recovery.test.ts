import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, defineTool, type MemoryStoreData } from '@flowing/runtime';
import { startServer, type RunningServer } from '@flowing/runtime/server';
import { singleToolMachine } from '../helpers/runtime-machines.ts';
import { abortableTool } from './harness.ts';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A tool counting its runs; `idempotent` as asked. */
function countingTool(idempotent: boolean) {
  const state = { calls: 0 };
  const tool = defineTool({
    name: 'wait',
    description: 'counts',
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    idempotent,
    timeoutMs: 5_000,
    async run() {
      state.calls++;
      return { ok: true };
    },
  });
  return { tool, state };
}

/** Runs a session into a call that never ends and copies the store while the call is in flight (the crash). */
async function crashMidCall(idempotent: boolean): Promise<{ data: MemoryStoreData; sessionId: string }> {
  const hanging = abortableTool();
  const tool = idempotent ? defineTool({ ...hanging.tool, idempotent: true }) : hanging.tool;
  const store = createMemoryStore();
  const runtime = createRuntime({ machines: [singleToolMachine(tool)], store });
  const session = await runtime.createSession('single-tool');
  void session.send({ type: 'RUN', args: {} });
  // The journal entry of the call is stored (before the call for a non-idempotent tool, with the next commit for an idempotent one).
  await vi.waitFor(async () => expect(await store.readJournal(session.id)).toHaveLength(1), { timeout: 2_000, interval: 5 });
  const data = store.exportData();
  await session.cancel('the test is done with the first process');
  return { data, sessionId: session.id };
}

describe('runtime server: recovery on start', () => {
  it('puts a session whose non-idempotent call was in flight in needs_attention, naming the call, without running it', async () => {
    const { data, sessionId } = await crashMidCall(false);
    const after = countingTool(false);
    const runtime = createRuntime({ machines: [singleToolMachine(after.tool)], store: createMemoryStore({ data }) });
    server = await startServer(runtime, { port: 0, log: () => {} });
    const report = await server.recovered;
    expect(report.resumed).toEqual([sessionId]);
    const view = await (await fetch(`${server.url}/sessions/${sessionId}`)).json();
    expect(view.status).toBe('needs_attention');
    const { events } = await (await fetch(`${server.url}/sessions/${sessionId}/events`)).json();
    const unknown = events.find((e: { type: string }) => e.type === 'tool.unknown_outcome');
    expect(unknown.data).toMatchObject({ tool: 'wait', callId: expect.stringContaining('calling@') });
    expect(after.state.calls).toBe(0);
    const refused = await fetch(`${server.url}/sessions/${sessionId}/events`, {
      method: 'POST',
      body: JSON.stringify({ type: 'RUN', args: {} }),
    });
    expect(refused.status).toBe(409);
    expect((await refused.json()).code).toBe('SESSION_NEEDS_ATTENTION');
  });

  it('runs an idempotent call that was in flight again and continues the session', async () => {
    const { data, sessionId } = await crashMidCall(true);
    const after = countingTool(true);
    const runtime = createRuntime({ machines: [singleToolMachine(after.tool)], store: createMemoryStore({ data }) });
    server = await startServer(runtime, { port: 0, log: () => {} });
    await server.recovered;
    const view = await (await fetch(`${server.url}/sessions/${sessionId}`)).json();
    expect(after.state.calls).toBe(1);
    expect(view.status).toBe('waiting');
    expect(view.context.result).toEqual({ ok: true });
  });

  it('answers /readyz 503 until recovery is over, then 200', async () => {
    const { data } = await crashMidCall(true);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = defineTool({
      ...countingTool(true).tool,
      run: async () => {
        await gate;
        return { ok: true };
      },
    });
    const runtime = createRuntime({ machines: [singleToolMachine(slow)], store: createMemoryStore({ data }) });
    server = await startServer(runtime, { port: 0, log: () => {} });
    const during = await fetch(`${server.url}/readyz`);
    expect(during.status).toBe(503);
    expect((await during.json()).code).toBe('SERVER_NOT_READY');
    release();
    await server.recovered;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('lets a person resolve the unknown outcome as completed: the machine takes onDone and the tool never runs again', async () => {
    const { data, sessionId } = await crashMidCall(false);
    const after = countingTool(false);
    const runtime = createRuntime({ machines: [singleToolMachine(after.tool)], store: createMemoryStore({ data }) });
    server = await startServer(runtime, { port: 0, log: () => {} });
    await server.recovered;
    const post = (body: unknown) => fetch(`${server!.url}/sessions/${sessionId}/resolve`, { method: 'POST', body: JSON.stringify(body) });
    const { events } = await (await fetch(`${server.url}/sessions/${sessionId}/events`)).json();
    const callId = events.find((e: { type: string }) => e.type === 'tool.unknown_outcome').data.callId;

    const wrongCall = await post({ callId: 'calling@99', outcome: 'completed', output: { ok: true } });
    expect(wrongCall.status).toBe(409);
    expect((await wrongCall.json()).code).toBe('NO_UNRESOLVED_CALL');
    const badOutput = await post({ callId, outcome: 'completed', output: { ok: 'yes' } });
    expect(badOutput.status).toBe(422);

    const resolved = await post({ callId, outcome: 'completed', output: { ok: true }, note: 'checked the ledger' });
    expect(resolved.status).toBe(200);
    const view = await resolved.json();
    expect(view.status).toBe('waiting');
    expect(view.context.result).toEqual({ ok: true });
    expect(after.state.calls).toBe(0);
    const log = (await (await fetch(`${server.url}/sessions/${sessionId}/events`)).json()).events;
    expect(log.filter((e: { type: string }) => e.type === 'tool.completed').map((e: { data: unknown }) => e.data)).toEqual([
      expect.objectContaining({ callId, resolvedBy: 'person', note: 'checked the ledger', output: { ok: true } }),
    ]);
    const again = await post({ callId, outcome: 'completed', output: { ok: true } });
    expect(again.status).toBe(409);
  });

  it('lets a person resolve the unknown outcome as failed: the machine takes onError with that code', async () => {
    const { data, sessionId } = await crashMidCall(false);
    const after = countingTool(false);
    const runtime = createRuntime({ machines: [singleToolMachine(after.tool)], store: createMemoryStore({ data }) });
    server = await startServer(runtime, { port: 0, log: () => {} });
    await server.recovered;
    const { events } = await (await fetch(`${server.url}/sessions/${sessionId}/events`)).json();
    const callId = events.find((e: { type: string }) => e.type === 'tool.unknown_outcome').data.callId;
    const resolved = await fetch(`${server.url}/sessions/${sessionId}/resolve`, {
      method: 'POST',
      body: JSON.stringify({ callId, outcome: 'failed', error: { code: 'PAYMENT_NOT_SENT', message: 'the bank has no record' } }),
    });
    const view = await resolved.json();
    expect(view.status).toBe('waiting');
    expect(view.context.error).toBe('PAYMENT_NOT_SENT');
    expect(after.state.calls).toBe(0);
  });
});
