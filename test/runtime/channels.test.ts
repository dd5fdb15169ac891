import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, type RuntimeEvent, type SessionStore } from '@flowing/runtime';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { channelRoutes, checkChannelProject, overlappingRoutes, validateSpec } from '@flowing/spec';
import { deliverMessage } from '../../runtime/channels/deliver.ts';
import { ChannelRouter, receiverSessionId } from '../../runtime/channels/router.ts';
import { BILLING, importChannelMachines, ORDERS, specOf, writeChannelMachines } from '../helpers/channel-machines.ts';
import { copyProject } from '../helpers/project.ts';
import { within } from '../helpers/wait.ts';

describe('channel routing rules (from the specs alone)', () => {
  it('lists the routing table and refuses prefixes of two machines that a channel could match both of', () => {
    const support = { id: 'support', channels: { listen: ['support.*'], key: 'k' } };
    const billing = { id: 'billing', channels: { listen: ['billing.*'], key: 'k' } };
    expect(channelRoutes([support, billing]).map((r) => `${r.pattern} -> ${r.machine}`)).toEqual([
      'billing.* -> billing',
      'support.* -> support',
    ]);
    expect(overlappingRoutes(channelRoutes([support, billing]))).toEqual([]);
    const refunds = { id: 'refunds', channels: { listen: ['billing.refund.*'], key: 'k' } };
    expect(overlappingRoutes(channelRoutes([billing, refunds])).map(([a, b]) => [a.machine, b.machine])).toEqual([['billing', 'refunds']]);
    const exact = { id: 'exact', channels: { listen: ['billing.need_order'], key: 'k' } };
    expect(overlappingRoutes(channelRoutes([billing, exact]))).toHaveLength(1);
    expect(overlappingRoutes(channelRoutes([{ id: 'a', channels: { listen: ['billingx.*'], key: 'k' } }, billing]))).toEqual([]);
  });

  it("checks each message against the project: a receiver, the event it arrives as, and that event's payload fields", () => {
    const orders = specOf(ORDERS);
    const billing = specOf(BILLING);
    const problems = checkChannelProject([orders, billing]);
    expect(problems).toEqual([
      expect.objectContaining({
        machine: 'orders',
        code: 'SPEC_CHANNEL_UNROUTED',
        path: ['states', 'idle', 'on', 'AUDIT', 'emit', 0, 'channel'],
      }),
    ]);
    const wrongData = structuredClone(ORDERS) as any;
    wrongData.states.idle.on.ASK_BILLING.emit[0].data = { orderId: 'event.orderId', qestion: 'event.question' };
    expect(checkChannelProject([specOf(wrongData), billing]).map((p) => [p.code, p.path.join('/')])).toEqual([
      ['SPEC_CHANNEL_PAYLOAD', 'states/idle/on/ASK_BILLING/emit/0/data/qestion'],
      ['SPEC_CHANNEL_PAYLOAD', 'states/idle/on/ASK_BILLING/emit/0/data'],
      ['SPEC_CHANNEL_UNROUTED', 'states/idle/on/AUDIT/emit/0/channel'],
    ]);
    const undeclared = structuredClone(ORDERS) as any;
    undeclared.states.idle.on.ASK_BILLING.emit[0].channel = 'billing.refund_done';
    expect(checkChannelProject([specOf(undeclared), billing])[0]).toMatchObject({ code: 'SPEC_CHANNEL_UNKNOWN_MESSAGE' });
  });

  it('validates one spec: listen patterns, a string key field, an event for each pattern, channel names in emits', () => {
    const bad = structuredClone(BILLING) as any;
    bad.channels = { listen: ['Billing*', 'refunds.*'], key: 'questions' };
    bad.states.open.on.BILLING_NEED_ORDER.emit = [{ channel: 'x..y', key: 'event.orderId' }];
    const codes = validateSpec(bad).problems.map((p) => [p.code, p.path]);
    expect(codes).toEqual(
      expect.arrayContaining([
        ['SPEC_CHANNEL_KEY', '/channels/key'],
        ['SPEC_CHANNEL_NAME', '/channels/listen/0'],
        ['SPEC_CHANNEL_NO_EVENTS', '/channels/listen/1'],
        ['SPEC_CHANNEL_NAME', '/states/open/on/BILLING_NEED_ORDER/emit/0/channel'],
      ]),
    );
  });
});

let project: Awaited<ReturnType<typeof copyProject>>;
let machines: { orders: any; billing: any };
beforeAll(async () => {
  project = await copyProject('flowing-channels-');
  await writeChannelMachines(project.dir, [ORDERS, BILLING]);
  machines = await importChannelMachines(project.dir);
}, 60_000);
afterAll(async () => {
  await project?.remove();
});

/** Resolves with the event of `type` once the session logs it (stored or live). */
function logged(runtime: ReturnType<typeof createRuntime>, sessionId: string, type: string, count = 1): Promise<RuntimeEvent[]> {
  return within(
    new Promise((resolve) => {
      const seen: RuntimeEvent[] = [];
      const stop = runtime.session(sessionId).subscribe(0, (event) => {
        if (event.type !== type) return;
        seen.push(event);
        if (seen.length === count) {
          queueMicrotask(stop);
          resolve(seen);
        }
      });
    }),
    10_000,
    `${type} in ${sessionId}`,
  );
}

describe.each([
  ['memory', () => createMemoryStore()],
  ['sqlite', () => createSqliteStore({ file: join(project.dir, `channels-${Date.now()}.db`) })],
] as Array<[string, () => SessionStore]>)('channel delivery on the %s store', (_kind, makeStore) => {
  it('creates the receiving session for a new key, delivers to it for a known key, and logs the message on both sides', async () => {
    const runtime = createRuntime({ machines: [machines.orders, machines.billing], store: makeStore() });
    const sender = await runtime.createSession(machines.orders);
    const receiverId = receiverSessionId('billing', 'A1');
    const two = logged(runtime, receiverId, 'channel.received', 2);
    await sender.send({ type: 'ASK_BILLING', orderId: 'A1', question: 'paid?' });
    await sender.send({ type: 'ASK_BILLING', orderId: 'A1', question: 'refunded?' });
    const received = await two;
    const snapshot = await runtime.session(receiverId).snapshot();
    expect(snapshot).toMatchObject({ machineId: 'billing', context: { orderId: 'A1', questions: 2, lastQuestion: 'refunded?' } });
    const sent = (await sender.events()).filter((e) => e.type === 'channel.sent');
    expect(sent.map((e) => e.data)).toEqual([
      expect.objectContaining({ channel: 'billing.need_order', key: 'A1', to: receiverId, data: { orderId: 'A1', question: 'paid?' } }),
      expect.objectContaining({ to: receiverId, data: { orderId: 'A1', question: 'refunded?' } }),
    ]);
    expect(received.map((e) => e.data)).toEqual(
      sent.map((e) => expect.objectContaining({ from: sender.id, messageId: (e.data as any).messageId })),
    );
    const other = logged(runtime, receiverSessionId('billing', 'B2'), 'channel.received');
    await sender.send({ type: 'ASK_BILLING', orderId: 'B2', question: 'where?' });
    await other;
    expect((await runtime.session(receiverSessionId('billing', 'B2')).snapshot()).context).toMatchObject({ orderId: 'B2', questions: 1 });
  });

  it('applies a message delivered again once, and refuses a payload that breaks the receiving event', async () => {
    const runtime = createRuntime({ machines: [machines.orders, machines.billing], store: makeStore() });
    const router = new ChannelRouter([machines.orders, machines.billing]);
    const message = { messageId: 'm-1', channel: 'billing.need_order', key: 'C3', data: { orderId: 'C3', question: 'q' }, from: 'someone' };
    expect(await deliverMessage(runtime, router, message)).toMatchObject({ applied: true });
    expect(await deliverMessage(runtime, router, message)).toMatchObject({ applied: true, duplicate: true });
    const receiver = runtime.session(receiverSessionId('billing', 'C3'));
    expect((await receiver.snapshot()).context).toMatchObject({ questions: 1 });
    expect((await receiver.events()).filter((e) => e.type === 'channel.received')).toHaveLength(1);
    const broken = { ...message, messageId: 'm-2', data: { orderId: 'C3', question: 42 } };
    expect(await deliverMessage(runtime, router, broken)).toMatchObject({ applied: false, code: 'INVALID_PAYLOAD' });
    expect((await receiver.snapshot()).context).toMatchObject({ questions: 1 });
  });

  it('notes a message whose first application lost its note (the process died between the two commits) when it comes again, once', async () => {
    const runtime = createRuntime({ machines: [machines.orders, machines.billing], store: makeStore() });
    const router = new ChannelRouter([machines.orders, machines.billing]);
    const message = { messageId: 'm-9', channel: 'billing.need_order', key: 'D4', data: { orderId: 'D4', question: 'q' }, from: 'someone' };
    await runtime.createSession(machines.billing, { orderId: 'D4' }, { sessionId: receiverSessionId('billing', 'D4') });
    const receiver = runtime.session(receiverSessionId('billing', 'D4'));
    // Applied under the message's id, as the first delivery did, without the note that would have followed.
    expect(await receiver.send({ type: 'BILLING_NEED_ORDER', ...message.data }, { eventId: message.messageId })).toMatchObject({
      applied: true,
    });
    expect((await receiver.events()).filter((e) => e.type === 'channel.received')).toHaveLength(0);
    for (let i = 0; i < 2; i++) expect(await deliverMessage(runtime, router, message)).toMatchObject({ applied: true, duplicate: true });
    expect((await receiver.events()).filter((e) => e.type === 'channel.received').map((e) => e.data)).toEqual([
      { messageId: 'm-9', channel: 'billing.need_order', from: 'someone' },
    ]);
    expect((await receiver.snapshot()).context).toMatchObject({ questions: 1 });
  });

  it('logs a message no machine of the runtime receives as channel.failed CHANNEL_UNROUTED', async () => {
    const runtime = createRuntime({ machines: [machines.orders], store: makeStore() });
    const sender = await runtime.createSession(machines.orders);
    await sender.send({ type: 'ASK_BILLING', orderId: 'A1', question: 'paid?' });
    const failed = (await sender.events()).filter((e) => e.type === 'channel.failed');
    expect(failed.map((e) => e.data)).toEqual([expect.objectContaining({ channel: 'billing.need_order', code: 'CHANNEL_UNROUTED' })]);
  });
});

describe('the runtime refuses a routing table with two receivers for one channel', () => {
  it('throws MACHINE_INVALID naming both machines', () => {
    const twin = { ...machines.billing, id: 'billing-two', channels: { listen: ['billing.need_order'], key: 'orderId' } };
    expect(() => createRuntime({ machines: [machines.billing, twin] })).toThrow(/billing.*billing-two.*overlapping/);
  });
});
