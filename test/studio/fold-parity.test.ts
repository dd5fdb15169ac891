// The studio folds logs in the browser (studio/src/inspect/fold.ts) and the runtime has sessionAt: the two must agree,
// or the Inspect view shows a session as it never was.
import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, sessionAt as runtimeSessionAt, type RuntimeEvent } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { sessionAt as studioSessionAt } from '../../studio/src/inspect/fold.ts';
import type { WireEvent } from '../../studio/src/inspect/wire.ts';
import { guardedDoneMachine, quoteTool } from '../helpers/runtime-failing-machines.ts';

/** What both folds give at every event of the log, side by side. */
function bothAtEveryEvent(events: readonly RuntimeEvent[]) {
  const wire = events.map((e) => ({ ...e }) as WireEvent);
  return events.map((event, index) => {
    const runtime = runtimeSessionAt(events, event.seq);
    const studio = studioSessionAt(wire, index);
    const shape = (at: typeof runtime | typeof studio) => ({
      seq: at.seq, state: at.state, activeStates: at.activeStates, context: at.context ?? null, status: at.status,
      pendingCalls: at.pendingCalls.map((c) => ({ callId: c.callId, kind: c.kind, name: c.name })),
      approval: at.approval ? { approvalId: at.approval.approvalId, tool: at.approval.tool, decision: at.approval.decision ?? null } : null,
      lastRejection: at.lastRejection ? { seq: at.lastRejection.seq, event: at.lastRejection.event, code: at.lastRejection.code } : null,
    });
    return { seq: event.seq, type: event.type, runtime: shape(runtime), studio: shape(studio) };
  });
}

function expectSame(events: readonly RuntimeEvent[]) {
  for (const step of bothAtEveryEvent(events)) expect({ seq: step.seq, type: step.type, at: step.studio }).toEqual({ seq: step.seq, type: step.type, at: step.runtime });
}

describe('the studio fold and the runtime sessionAt', () => {
  it('agree at every event of an order-support session: lookups, a refusal, an approved refund, a cancel', async () => {
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    await session.send({ type: 'APPROVE' });
    await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
    await session.send({ type: 'APPROVE' });
    await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
    await session.send({ type: 'REJECT', reason: 'no' });
    await session.cancel('the customer left');
    expectSame(await session.events());
  });

  it('agree on a stop for a person (a result no branch takes) and the person\'s answer', async () => {
    const machine = guardedDoneMachine(quoteTool().tool);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'CHECK', amount: 500 });
    const stopped = await session.events();
    const callId = (stopped.find((e) => e.type === 'tool.started')!.data as { callId: string }).callId;
    const app = createServer(runtime, { log: () => {} });
    const resolved = await app.request(`http://127.0.0.1/sessions/${session.id}/resolve`, {
      method: 'POST', headers: { 'content-type': 'application/json', host: '127.0.0.1' }, body: JSON.stringify({ callId, outcome: 'completed', output: { total: 50 } }),
    });
    expect(resolved.status).toBe(200);
    expectSame(await session.events());
  });
});
