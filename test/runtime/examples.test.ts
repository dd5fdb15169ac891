import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, defineTool, type RuntimeEvent } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { incidentTriage } from '../../machines/incident-triage/incident-triage.machine.ts';
import { settle } from '@flowing/runtime';
import { countingTools } from '../helpers/runtime-counting.ts';

const types = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

function orderRuntime(overrides: Record<string, ReturnType<typeof defineTool>> = {}) {
  const { tools, counts } = countingTools({ ...orderSupport.tools, ...overrides });
  const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), tools });
  return { runtime, counts };
}

describe('order-support end to end with the scripted provider', () => {
  it('answers an order query on the shipped branch with 3 tool calls and 3 model calls', async () => {
    const { runtime, counts } = orderRuntime();
    const session = await runtime.createSession(orderSupport);
    const result = await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    expect(result).toMatchObject({ applied: true, status: 'waiting', state: { active: 'idle' } });
    expect(counts).toEqual({ resolve_user: 1, query_order: 1, trace_shipment: 1, issue_refund: 0 });
    const events = await session.events();
    expect(types(events, 'tool.completed').map((d) => d.tool)).toEqual(['resolve_user', 'query_order', 'trace_shipment']);
    expect(types(events, 'llm.completed').map((d) => d.kind)).toEqual(['classify', 'extract', 'generate']);
    expect(types(events, 'message.delta').length).toBeGreaterThan(1);
    expect(types(events, 'message.complete')[0]!.text).toBe('Order A1001 is shipped. Leipzig hub 2026-12-02');
    expect((await session.snapshot()).context).toMatchObject({ reply: 'Order A1001 is shipped. Leipzig hub 2026-12-02' });
    expect(events.every((e, i) => e.seq === i + 1 && Object.isFrozen(e) && Object.isFrozen(e.data))).toBe(true);
  });

  it('asks again when the order does not exist', async () => {
    const { runtime, counts } = orderRuntime();
    const session = await runtime.createSession(orderSupport);
    const result = await session.send({ type: 'USER_MESSAGE', text: 'where is order Z9999' });
    expect(result).toMatchObject({ applied: true, state: { active: 'order_not_found' } });
    expect(counts.trace_shipment).toBe(0);
    expect(types(await session.events(), 'tool.failed')[0]).toMatchObject({
      tool: 'query_order',
      error: { code: 'ORDER_NOT_FOUND' },
      attempts: 1,
    });
    expect((await session.snapshot()).context).toMatchObject({ reply: 'I could not find order Z9999. Please check the number.' });
  });

  it('pays a refund once after APPROVE', async () => {
    const { runtime, counts } = orderRuntime();
    const session = await runtime.createSession(orderSupport);
    expect(await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' })).toMatchObject({
      state: { active: 'await_approval' },
    });
    expect(counts.issue_refund).toBe(0);
    const requested = types(await session.events(), 'approval.requested')[0]!;
    expect(requested).toMatchObject({ tool: 'issue_refund', args: { order_id: 'A1002', amount: 120 } });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: { active: 'idle' } });
    expect(counts.issue_refund).toBe(1);
    const started = types(await session.events(), 'tool.started').find((d) => d.tool === 'issue_refund')!;
    expect(started.args).toEqual(requested.args);
    expect((await session.snapshot()).context).toMatchObject({ refundId: expect.stringMatching(/^R-A1002-/) });
  });

  it('pays nothing when the refund is rejected', async () => {
    const { runtime, counts } = orderRuntime();
    const session = await runtime.createSession(orderSupport);
    await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
    expect(await session.send({ type: 'REJECT', reason: 'outside the return window' })).toMatchObject({
      applied: true,
      state: { active: 'idle' },
    });
    expect(counts.issue_refund).toBe(0);
    expect((await session.snapshot()).context).toMatchObject({ reply: 'The refund was not approved: outside the return window' });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: false, code: 'NO_TRANSITION' });
    expect(counts.issue_refund).toBe(0);
  });

  it('cancels mid-run: the in-flight tool is aborted and nothing runs after', async () => {
    let aborted = false;
    let release: () => void = () => {};
    const slowOrder = defineTool({
      ...orderSupport.tools.query_order!,
      run: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          release = () => reject(new Error('released'));
          signal.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    });
    const { runtime, counts } = orderRuntime({ query_order: slowOrder });
    const session = await runtime.createSession(orderSupport);
    const running = session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    for (let i = 0; i < 50 && counts.query_order === 0; i++) await settle(1);
    expect(counts.query_order).toBe(1);
    await session.cancel('customer hung up');
    expect(aborted).toBe(true);
    release();
    await running;
    await settle();
    expect((await session.snapshot()).status).toBe('cancelled');
    expect(counts.trace_shipment).toBe(0);
    const events = await session.events();
    expect(types(events, 'session.cancelled')).toHaveLength(1);
    expect(types(events, 'tool.started').map((d) => d.tool)).toEqual(['resolve_user', 'query_order']);
  });
});

describe('incident-triage end to end', () => {
  it('gathers logs and metrics in parallel, summarises and pages for a critical alert', async () => {
    const { tools, counts } = countingTools(incidentTriage.tools);
    const runtime = createRuntime({ machines: [incidentTriage], store: createMemoryStore(), tools });
    const session = await runtime.createSession(incidentTriage);
    const result = await session.send({ type: 'ALERT', service: 'checkout', severity: 'critical' });
    expect(result).toMatchObject({ applied: true, status: 'waiting', state: 'monitoring' });
    expect(counts).toMatchObject({ fetch_logs: 1, fetch_metrics: 1, page_oncall: 1 });
    expect(await session.send({ type: 'RESOLVE' })).toMatchObject({ applied: true, status: 'done' });
  });
});

it('is typed: send takes the generated event union', async () => {
  const runtime = createRuntime({ machines: [orderSupport] });
  const session = await runtime.createSession(orderSupport);
  // @ts-expect-error -- USER_MESSAGE needs its text
  const refused = await session.send({ type: 'USER_MESSAGE' });
  expect(refused).toMatchObject({ applied: false, code: 'INVALID_PAYLOAD' });
});
