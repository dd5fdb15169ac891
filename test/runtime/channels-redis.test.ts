/**
 * Channels across runtimes on one Redis: the commit of a step is the outbox (its `channel.sent` goes to the channel's
 * stream in the same write), and the runtimes serving the listening machine consume the stream in one consumer group.
 * Here both runtimes live in the test process, each with its own store connection and only its own machine; the
 * two-process case with a SIGKILLed receiver is test/server/channels-serve.test.ts.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRuntime, type Runtime, type RuntimeEvent } from '@flowing/runtime';
import { createRedisStore, type RedisStore } from '@flowing/runtime/redis';
import { deliverMessage } from '../../runtime/channels/deliver.ts';
import { ChannelRouter, receiverSessionId } from '../../runtime/channels/router.ts';
import { BILLING, importChannelMachines, ORDERS, writeChannelMachines } from '../helpers/channel-machines.ts';
import { copyProject } from '../helpers/project.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { within } from '../helpers/wait.ts';

let redis: TestRedis;
let project: Awaited<ReturnType<typeof copyProject>>;
let machines: { orders: any; billing: any };
let client: Redis;
const opened: Array<{ runtime?: Runtime; store: RedisStore }> = [];
let places = 0;

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
  project = await copyProject('flowing-channels-redis-');
  await writeChannelMachines(project.dir, [ORDERS, BILLING]);
  machines = await importChannelMachines(project.dir);
}, 60_000);
afterAll(async () => {
  for (const { runtime, store } of opened) {
    await runtime?.channels?.stop();
    await store.close();
  }
  client?.disconnect();
  await redis?.stop();
  await project?.remove();
});

/** A store on a fresh prefix (one per test) with a short claim time, kept to be closed after the tests. */
function storeAt(prefix: string): RedisStore {
  const store = createRedisStore({ url: redis.url, prefix, lease: { ttlMs: 1_000 }, channels: { claimIdleMs: 300 } });
  opened.push({ store });
  return store;
}

function runtimeOn(store: RedisStore, served: any[]): Runtime {
  const runtime = createRuntime({ machines: served, store });
  opened.push({ runtime, store });
  return runtime;
}

/** Resolves with the `channel.received` events of a session once it has logged `count` of them. */
function received(runtime: Runtime, sessionId: string, count: number): Promise<RuntimeEvent[]> {
  return within(
    new Promise((resolve) => {
      const seen: RuntimeEvent[] = [];
      const stop = runtime.session(sessionId).subscribe(0, (event) => {
        if (event.type !== 'channel.received') return;
        seen.push(event);
        if (seen.length === count) {
          queueMicrotask(stop);
          resolve(seen);
        }
      });
    }),
    20_000,
    `${count} channel.received in ${sessionId}`,
  );
}

/** How many times each message id was applied, from the receiver's log. */
async function appliedCounts(store: RedisStore, sessionId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const event of await store.readEvents(sessionId)) {
    if (event.type !== 'channel.received') continue;
    const id = (event.data as { messageId: string }).messageId;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('channel messages between runtimes on one Redis', () => {
  it('a sender that does not serve the receiver stores its messages; the receiver, started later, applies each once', async () => {
    const prefix = `t${++places}:`;
    const sender = runtimeOn(storeAt(prefix), [machines.orders]);
    const session = await sender.createSession(machines.orders);
    await session.send({ type: 'ASK_BILLING', orderId: 'A1', question: 'paid?' });
    const sent = (await session.events()).filter((e) => e.type === 'channel.sent');
    // The sending runtime does not know the receiving machine: the receiving runtime routes the message.
    expect(sent.map((e) => e.data)).toEqual([
      { messageId: expect.any(String), channel: 'billing.need_order', key: 'A1', data: { orderId: 'A1', question: 'paid?' } },
    ]);
    expect(await client.xlen(`${prefix}channel:billing`)).toBe(1);

    const receiverId = receiverSessionId('billing', 'A1');
    const receiver = runtimeOn(storeAt(prefix), [machines.billing]);
    const first = await received(receiver, receiverId, 1);
    expect(first[0]!.data).toEqual({ messageId: (sent[0]!.data as any).messageId, channel: 'billing.need_order', from: session.id });
    const two = received(receiver, receiverId, 2);
    await session.send({ type: 'ASK_BILLING', orderId: 'A1', question: 'refunded?' });
    await two;
    expect((await receiver.session(receiverId).snapshot()).context).toMatchObject({ questions: 2, lastQuestion: 'refunded?' });
    expect([...(await appliedCounts(receiver.store as RedisStore, receiverId)).values()]).toEqual([1, 1]);
    // Acknowledged once applied: the ack follows the commit the subscriber saw, so it is waited for.
    const pendingCount = async () => ((await client.xpending(`${prefix}channel:billing`, 'billing')) as [number, ...unknown[]])[0];
    await expect.poll(pendingCount, { timeout: 10_000, message: 'both messages acknowledged after they were applied' }).toBe(0);
  }, 60_000);

  it('appends a message to its stream only with the commit that stores it: a refused commit appends none, a resent one none twice', async () => {
    const prefix = `t${++places}:`;
    const store = storeAt(prefix);
    const sender = runtimeOn(store, [machines.orders]);
    const session = await sender.createSession(machines.orders);
    const record = (await store.load(session.id))!;
    const event = {
      seq: record.seq + 1,
      sessionId: session.id,
      traceId: record.traceId,
      at: Date.now(),
      type: 'channel.sent' as const,
      data: {
        messageId: `${session.id}-m${record.seq + 1}`,
        channel: 'billing.need_order',
        key: 'Z9',
        data: { orderId: 'Z9', question: 'q' },
      },
    };
    const next = { ...record, version: record.version + 1, seq: record.seq + 1 };
    const stale = { ...record, version: record.version, seq: record.seq + 1 };
    await expect(store.commit({ expectedVersion: record.version - 1, record: stale, events: [event], journal: [] })).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
    expect(await client.xlen(`${prefix}channel:billing`)).toBe(0);
    await store.commit({ expectedVersion: record.version, record: next, events: [event], journal: [] });
    // The same commit again (a reply lost to a reconnect): already applied, nothing appended twice.
    await store.commit({ expectedVersion: record.version, record: next, events: [event], journal: [] });
    const entries = await client.xrange(`${prefix}channel:billing`, '-', '+');
    expect(entries.map(([, fields]) => JSON.parse(fields[1]!))).toEqual([{ ...event.data, from: session.id, at: event.at }]);
  }, 30_000);

  it('a message whose receiving session another process is stepping stays pending and is applied once that step is over', async () => {
    const prefix = `t${++places}:`;
    const store = storeAt(prefix);
    const receiverId = receiverSessionId('billing', 'L5');
    const receiver = createRuntime({ machines: [machines.billing], store, lease: { waitMs: 100 } });
    opened.push({ runtime: receiver, store });
    await receiver.createSession(machines.billing, { orderId: 'L5' }, { sessionId: receiverId });
    // Another process holds the receiving session's lease (a long step, renewed) until told to let go.
    const held = await store.leases.acquire(receiverId, 'another-process');
    if (!held.granted) throw new Error('the lease was not granted');
    const renewing = setInterval(() => void store.leases.renew(receiverId, 'another-process', held.token), 200);
    const sender = runtimeOn(storeAt(prefix), [machines.orders]);
    const session = await sender.createSession(machines.orders);
    await session.send({ type: 'ASK_BILLING', orderId: 'L5', question: 'held?' });
    // Handed to the receiver, refused for now (SESSION_LEASED), left pending and handed out again: not given up.
    await vi.waitFor(
      async () => {
        const pending = (await client.xpending(`${prefix}channel:billing`, 'billing', '-', '+', 10)) as Array<
          [string, string, number, number]
        >;
        expect(pending).toHaveLength(1);
        expect(pending[0]![3]).toBeGreaterThanOrEqual(2);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect((await store.readEvents(receiverId)).filter((e) => e.type === 'channel.received')).toHaveLength(0);
    clearInterval(renewing);
    await store.leases.release(receiverId, held.token);
    const applied = await received(receiver, receiverId, 1);
    expect(applied[0]!.data).toMatchObject({ from: session.id });
    expect((await receiver.session(receiverId).snapshot()).context).toMatchObject({ questions: 1, lastQuestion: 'held?' });
  }, 30_000);

  it("a message a dead consumer left pending is claimed and applied once; one it had applied is dropped by the receiver's log, even past the ids a session remembers", async () => {
    const prefix = `t${++places}:`;
    const store = storeAt(prefix);
    const sender = runtimeOn(storeAt(prefix), [machines.orders]);
    // A receiving process that applies the first message and dies before acknowledging anything.
    const doomed = createRuntime({ machines: [machines.billing], store: { ...storeAt(prefix), channels: undefined } as never });
    const router = new ChannelRouter([machines.billing]);
    const handled: string[] = [];
    let allHandled!: () => void;
    const three = new Promise<void>((resolve) => (allHandled = resolve));
    const dead = store.channels.consume({
      group: 'billing',
      consumer: 'dead',
      segments: ['billing'],
      handle: async ({ message }) => {
        if (handled.length === 0) await deliverMessage(doomed, router, message);
        handled.push(message.messageId);
        if (handled.length === 3) allHandled();
        return false;
      },
    });
    const session = await sender.createSession(machines.orders);
    for (const question of ['one', 'two', 'three']) await session.send({ type: 'ASK_BILLING', orderId: 'B2', question });
    await within(three, 10_000, 'the doomed consumer reading three messages');
    await dead.stop();
    const receiverId = receiverSessionId('billing', 'B2');
    // 70 other messages after the first: its id is no longer among the 64 the session remembers.
    for (let i = 0; i < 70; i++) {
      const filler = {
        messageId: `filler-${i}`,
        channel: 'billing.need_order',
        key: 'B2',
        data: { orderId: 'B2', question: 'f' },
        from: 'x',
      };
      expect(await deliverMessage(doomed, router, filler)).toMatchObject({ applied: true });
    }

    const survivor = runtimeOn(store, [machines.billing]);
    await received(survivor, receiverId, 73);
    // Let the claim pass that took the three messages acknowledge them, then check nothing is pending and nothing was
    // applied twice.
    await within(
      (async () => {
        for (;;) {
          const pending = (await client.xpending(`${prefix}channel:billing`, 'billing')) as [number, ...unknown[]];
          if (pending[0] === 0) return;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })(),
      10_000,
      'no message pending',
    );
    const counts = await appliedCounts(store, receiverId);
    expect(handled.every((id) => counts.get(id) === 1)).toBe(true);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect((await survivor.session(receiverId).snapshot()).context).toMatchObject({ questions: 73 });
  }, 60_000);
});
