import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createInspector } from '@statelyai/inspect';
import { createMemoryStore, createRuntime, createXStateTrace, type InspectionSource } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
process.on('warning', onWarning);
afterEach(() => {
  warnings.length = 0;
});

/** A refund conversation of the example up to its approval: a model step and a tool call on the way. */
async function refundSession(inspect: (event: InspectionEvent, source: InspectionSource) => void) {
  const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), inspect });
  const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
  const result = await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
  return { runtime, session, result, log: await session.events() };
}

describe('the runtime inspect option (XState inspection events of every session)', () => {
  it('hears the machine and its child actors, each event tagged with its session and the log seq it followed', async () => {
    const heard: Array<{ event: InspectionEvent; source: InspectionSource }> = [];
    const { session, log } = await refundSession((event, source) => heard.push({ event, source }));
    expect(new Set(heard.map((h) => h.source.sessionId))).toEqual(new Set([session.id]));
    expect(heard.every((h) => h.source.machineId === 'order-support')).toBe(true);
    const types = new Set(heard.map((h) => h.event.type));
    for (const type of ['@xstate.actor', '@xstate.event', '@xstate.microstep', '@xstate.snapshot']) expect(types).toContain(type);
    // Child actors: the tool call the session invoked is an actor of its system, not the root.
    const toolStarted = log.find((e) => e.type === 'tool.started')!;
    const children = heard.filter((h) => h.event.type === '@xstate.actor' && h.event.actorRef.sessionId !== h.event.rootId);
    expect(children.length).toBeGreaterThan(0);
    expect(children.some((h) => h.source.afterSeq < toolStarted.seq)).toBe(true);
    // afterSeq never goes back and never passes the log's end.
    const seqs = heard.map((h) => h.source.afterSeq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(Math.max(...seqs)).toBeLessThanOrEqual(log.length);
  });

  it('an inspector that throws is reported once per session and the session runs as without it', async () => {
    let calls = 0;
    const { result, log } = await refundSession(() => {
      calls++;
      throw new Error('inspector down');
    });
    const plain = await refundSession(() => {});
    expect(calls).toBe(1);
    expect(result).toMatchObject({ applied: true });
    expect(log.map((e) => e.type)).toEqual(plain.log.map((e) => e.type));
    await new Promise((resolve) => setImmediate(resolve));
    const thrown = warnings.filter((w) => (w as Error & { code?: string }).code === 'FLOWING_INSPECTOR_THREW');
    expect(thrown).toHaveLength(1);
    expect(thrown[0]!.message).toContain('inspector down');
  });

  it('forwards to a Stately inspector (@statelyai/inspect) as it is', async () => {
    const sent: Array<{ type: string; sessionId?: string }> = [];
    const inspector = createInspector({
      send: (event) => {
        sent.push(event as { type: string; sessionId?: string });
      },
    });
    await refundSession((event) => inspector.inspect.next?.(event));
    await new Promise((resolve) => setTimeout(resolve, 20)); // the adapter sends on a timer
    const types = new Set(sent.map((e) => e.type));
    expect(types).toContain('@xstate.actor');
    expect(types).toContain('@xstate.event');
    expect(types).toContain('@xstate.snapshot');
  });
});

describe('createXStateTrace', () => {
  it('keeps plain JSON records per session: the microsteps that led to each state.changed sit just before it', async () => {
    const trace = createXStateTrace();
    const { session, log } = await refundSession(trace.inspect);
    const records = trace.read(session.id);
    expect(records.map((r) => r.index)).toEqual(records.map((_, i) => i + 1));
    expect(JSON.parse(JSON.stringify(records))).toEqual(records);
    const changes = log.filter((e) => e.type === 'state.changed' && e.data.event !== 'xstate.init');
    expect(changes.length).toBeGreaterThan(1);
    for (const change of changes) {
      const leading = records.filter((r) => r.afterSeq === change.seq - 1 && r.type === '@xstate.microstep' && r.actor.root);
      const taken = leading.flatMap((r) => r.transitions ?? []);
      expect(taken.map((t) => t.event)).toContain(change.data.event);
    }
    const rootSnapshot = records.findLast((r) => r.type === '@xstate.snapshot' && r.actor.root)!;
    expect(rootSnapshot.snapshot).toMatchObject({ status: 'active', context: { userId: 'u-ada' } });
    expect(trace.read(session.id, { afterSeq: log.length - 1 }).every((r) => r.afterSeq >= log.length - 1)).toBe(true);
    expect(trace.read('no-such-session')).toEqual([]);
  });

  it('is bounded: the oldest records of a session and the least recently active sessions are dropped', async () => {
    const trace = createXStateTrace({ perSession: 10, sessions: 2 });
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), inspect: trace.inspect });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const session = await runtime.createSession(orderSupport, { userId: `u-${i}` });
      await session.send({ type: 'USER_MESSAGE', text: 'where is A1001' });
      ids.push(session.id);
    }
    expect(trace.read(ids[0]!)).toEqual([]);
    for (const id of ids.slice(1)) {
      const records = trace.read(id);
      expect(records).toHaveLength(10);
      expect(records[0]!.index).toBe(trace.dropped(id) + 1);
      expect(trace.dropped(id)).toBeGreaterThan(0);
    }
  });
});

describe('GET /sessions/:id/xstate', () => {
  it('answers the kept records over HTTP, XSTATE_TRACE_OFF without a trace, SESSION_NOT_FOUND for an unknown id', async () => {
    const { startServer } = await import('@flowing/runtime/server');
    const trace = createXStateTrace();
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), inspect: trace.inspect });
    const withTrace = await startServer(runtime, { port: 0, xstateTrace: trace, log: () => {} });
    const withoutTrace = await startServer(runtime, { port: 0, log: () => {} });
    try {
      const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
      await session.send({ type: 'USER_MESSAGE', text: 'where is A1001' });
      const answer = await fetch(`${withTrace.url}/sessions/${session.id}/xstate?afterSeq=2`);
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as { records: Array<{ afterSeq: number }>; dropped: number };
      expect(body.records).toEqual(trace.read(session.id, { afterSeq: 2 }));
      expect(body.records.length).toBeGreaterThan(0);
      const off = await fetch(`${withoutTrace.url}/sessions/${session.id}/xstate`);
      expect([off.status, ((await off.json()) as { code: string }).code]).toEqual([404, 'XSTATE_TRACE_OFF']);
      const unknown = await fetch(`${withTrace.url}/sessions/no-such-session/xstate`);
      expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([404, 'SESSION_NOT_FOUND']);
      const bad = await fetch(`${withTrace.url}/sessions/${session.id}/xstate?afterSeq=-1`);
      expect([bad.status, ((await bad.json()) as { code: string }).code]).toEqual([400, 'SERVER_BAD_REQUEST']);
    } finally {
      await withTrace.close();
      await withoutTrace.close();
    }
  });
});
