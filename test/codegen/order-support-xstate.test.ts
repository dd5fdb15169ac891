import { createActor, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { defineTool, fromTool, ToolError, type AnyTool } from '../../runtime/index.ts';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { orderSupportTools } from '../../machines/order-support/order-support.registry.ts';

/** Fake tools with the real contracts (input/output schemas) and a call log. */
function fakeTools(orders: Record<string, { status: 'processing' | 'shipped' | 'delivered'; total: number; tracking_number?: string }>) {
  const calls: string[] = [];
  // The real contract, a fake `run`: the adapter still validates input and output against the tool's zod schemas.
  const fake = (name: keyof typeof orderSupportTools, run: (input: any) => unknown): never => {
    const real: AnyTool = orderSupportTools[name];
    return fromTool(
      defineTool({
        ...real,
        errors: { ...real.errors },
        run: async (input: unknown) => {
          calls.push(name);
          return run(input);
        },
      }),
    ) as never;
  };
  const machine = orderSupport.machine.provide({
    actors: {
      'tool.resolve_user': fake('resolve_user', () => ({ id: 'c-1', name: 'Ada', tier: 'gold' })),
      'tool.query_order': fake('query_order', ({ order_id }) => {
        const order = orders[order_id];
        if (!order) throw new ToolError('ORDER_NOT_FOUND', `no order ${order_id}`);
        return { order_id, ...order };
      }),
      'tool.trace_shipment': fake('trace_shipment', () => ({ carrier: 'Parcelo', location: 'Hub 7', eta: '2026-12-01' })),
      'tool.issue_refund': fake('issue_refund', ({ order_id, amount }) => ({ refund_id: `R-${order_id}`, amount })),
    },
  });
  return { machine, calls };
}

const ORDERS = {
  A1001: { status: 'shipped' as const, total: 40, tracking_number: 'T-1' },
  A1002: { status: 'processing' as const, total: 12 },
};

async function start(message: string) {
  const { machine, calls } = fakeTools(ORDERS);
  const actor = createActor(machine, { input: { userId: 'u-1' } });
  actor.start();
  actor.send({ type: 'USER_MESSAGE', text: message });
  return { actor, calls };
}

describe('the generated order-support machine on plain XState', () => {
  it('answers an order query on the shipped branch through resolve_user, query_order and trace_shipment', async () => {
    const { actor, calls } = await start('Where is my order A1001?');
    const snapshot = await waitFor(actor, (s) => s.matches({ active: 'idle' }) && s.context.reply !== undefined, { timeout: 5000 });
    expect(calls).toEqual(['resolve_user', 'query_order', 'trace_shipment']);
    expect(snapshot.context.intent).toBe('order_query');
    expect(snapshot.context.shipment?.location).toBe('Hub 7');
    expect(snapshot.context.reply).toContain('A1001 is shipped');
  });

  it('skips trace_shipment for an order that has not shipped', async () => {
    const { actor, calls } = await start('status of order A1002 please');
    await waitFor(actor, (s) => s.matches({ active: 'idle' }) && s.context.reply !== undefined, { timeout: 5000 });
    expect(calls).toEqual(['resolve_user', 'query_order']);
  });

  it('waits for approval before a refund, and pays only after APPROVE', async () => {
    const { actor, calls } = await start('I want a refund for order A1001');
    const waiting = await waitFor(actor, (s) => s.matches({ active: 'await_approval' }), { timeout: 5000 });
    expect(waiting.hasTag('approval')).toBe(true);
    expect(calls).toEqual(['resolve_user', 'query_order']);
    actor.send({ type: 'APPROVE' });
    const done = await waitFor(actor, (s) => s.context.refundId !== undefined, { timeout: 5000 });
    expect(calls).toEqual(['resolve_user', 'query_order', 'issue_refund']);
    expect(done.context.refundId).toBe('R-A1001');
    expect(done.matches({ active: 'idle' })).toBe(true);
  });

  it('never pays after REJECT', async () => {
    const { actor, calls } = await start('refund order A1001 please');
    await waitFor(actor, (s) => s.matches({ active: 'await_approval' }), { timeout: 5000 });
    actor.send({ type: 'REJECT', reason: 'outside policy' });
    const snapshot = actor.getSnapshot();
    expect(snapshot.matches({ active: 'idle' })).toBe(true);
    expect(snapshot.context.reply).toBe('The refund was not approved: outside policy');
    expect(calls).not.toContain('issue_refund');
  });

  it('handles ORDER_NOT_FOUND by asking again, then continues with a valid order', async () => {
    const { actor, calls } = await start('where is order Z9999');
    const notFound = await waitFor(actor, (s) => s.matches({ active: 'order_not_found' }), { timeout: 5000 });
    expect(notFound.context.reply).toBe('I could not find order Z9999. Please check the number.');
    actor.send({ type: 'USER_MESSAGE', text: 'sorry, it is A1002' });
    await waitFor(actor, (s) => s.matches({ active: 'idle' }) && s.context.order?.order_id === 'A1002', { timeout: 5000 });
    expect(calls).toEqual(['resolve_user', 'query_order', 'resolve_user', 'query_order']);
  });

  it('asks for the order number when the message has none', async () => {
    const { actor, calls } = await start('where is my parcel?');
    const snapshot = await waitFor(actor, (s) => s.matches({ active: 'ask_order_id' }), { timeout: 5000 });
    expect(snapshot.context.reply).toMatch(/order number/);
    expect(calls).toEqual([]);
  });

  it('cancels from any state inside the conversation', async () => {
    const { actor } = await start('I want a refund for order A1001');
    await waitFor(actor, (s) => s.matches({ active: 'await_approval' }), { timeout: 5000 });
    actor.send({ type: 'CANCEL' });
    expect(actor.getSnapshot().value).toBe('cancelled');
    expect(actor.getSnapshot().status).toBe('done');
  });
});
