/**
 * Channels between two `flowing serve` processes on one Redis: of the test machines, A serves only the sender
 * (`relay-orders`), B only the receiver (`relay-billing`). A burst of messages is sent through A; B is SIGKILLed while it delivers them, then started
 * again. Every message sent is applied exactly once (one `channel.received` per message id across the receiving
 * sessions' logs), none is lost, and nothing stays pending in B's consumer group.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { relaySpecs, writeChannelMachines } from '../helpers/channel-machines.ts';
import { copyProject } from '../helpers/project.ts';
import { SHORT_LEASE_TTL_MS, startRedis, type TestRedis } from '../helpers/redis.ts';
import { fullLog, post, startServe, type ServeChild } from './takeover-harness.ts';

const SENDERS = 6;
const PER_SENDER = 50;
const KEYS = 8;
const [ORDERS, BILLING] = relaySpecs();

let redis: TestRedis;
let client: Redis;
const projects: Array<Awaited<ReturnType<typeof copyProject>>> = [];
const children: ServeChild[] = [];

/** A project serving only the machines of `inputs`. */
async function projectWith(inputs: Parameters<typeof writeChannelMachines>[1]): Promise<string> {
  const project = await copyProject('flowing-channels-serve-');
  projects.push(project);
  await rm(join(project.dir, 'machines'), { recursive: true, force: true });
  await writeChannelMachines(project.dir, inputs);
  return project.dir;
}

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
}, 30_000);
afterAll(async () => {
  for (const child of children) await child.kill();
  client?.disconnect();
  await redis?.stop();
  for (const project of projects) await project.remove();
});

async function serve(dir: string): Promise<ServeChild> {
  const child = await startServe(dir, ['--store', redis.url, '--lease-ttl', String(SHORT_LEASE_TTL_MS)]);
  children.push(child);
  return child;
}

/** Entries of the receiver's group read so far and pending (handed out, not acknowledged). */
async function groupState(): Promise<{ read: number; pending: number }> {
  const groups = (await client.xinfo('GROUPS', 'flowing:channel:relay')) as unknown[][];
  const group = groups.map((fields) =>
    Object.fromEntries(fields.map((v, i, all) => (i % 2 === 0 ? [v, all[i + 1]] : [])).filter((e) => e.length)),
  );
  const billing = group.find((g) => g.name === 'relay-billing');
  return { read: Number(billing?.['entries-read'] ?? 0), pending: Number(billing?.pending ?? 0) };
}

/** Events stored in the receiving sessions' logs so far (read from their streams). */
async function receiverEvents(): Promise<number> {
  let total = 0;
  for (let k = 0; k < KEYS; k++) total += await client.xlen(`flowing:{relay-billing--K${k}}:e`);
  return total;
}

describe('channels across two flowing serve processes on one Redis', () => {
  it('the receiving process SIGKILLed mid-delivery of a burst and restarted: every message applied exactly once, none lost', async () => {
    const a = await serve(await projectWith([ORDERS]));
    const billingDir = await projectWith([BILLING]);
    let b = await serve(billingDir);

    const senders: string[] = [];
    for (let s = 0; s < SENDERS; s++) {
      const created = await post(`${a.url}/sessions`, { machine: 'relay-orders' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      senders.push(created.body.sessionId);
    }
    const send = (sessionId: string, orderId: string, question: string) =>
      post(`${a.url}/sessions/${sessionId}/events`, { type: 'ASK_BILLING', orderId, question }).then((sent) =>
        expect(sent.status, JSON.stringify(sent.body)).toBe(200),
      );
    // Live: one message per key, delivered while both run.
    for (let k = 0; k < KEYS; k++) await send(senders[0]!, `K${k}`, 'hello');
    await vi.waitFor(async () => expect((await groupState()).read).toBe(KEYS), { timeout: 20_000, interval: 20 });

    // The receiver goes down; the burst is stored meanwhile (the outbox keeps it), then the receiver comes back and
    // is killed while it delivers the backlog: some messages applied, their batch not yet acknowledged.
    await b.kill();
    await Promise.all(
      senders.map(async (sessionId, s) => {
        for (let i = 0; i < PER_SENDER; i++) await send(sessionId, `K${(s * PER_SENDER + i) % KEYS}`, `q${s}-${i}`);
      }),
    );
    const before = await receiverEvents();
    b = await serve(billingDir);
    await vi.waitFor(
      async () => {
        expect(await receiverEvents()).toBeGreaterThan(before + 20);
        expect((await groupState()).pending).toBeGreaterThan(0);
      },
      { timeout: 30_000, interval: 2 },
    );
    await b.kill();
    const atKill = await groupState();
    b = await serve(billingDir);

    const total = KEYS + SENDERS * PER_SENDER;
    const sentIds: string[] = [];
    for (const sessionId of senders) {
      for (const event of await fullLog(a.url, sessionId)) if (event.type === 'channel.sent') sentIds.push(event.data.messageId);
    }
    expect(sentIds).toHaveLength(total);
    const receivers = Array.from({ length: KEYS }, (_, k) => `relay-billing--K${k}`);
    const applied = new Map<string, number>();
    await vi.waitFor(
      async () => {
        applied.clear();
        for (const id of receivers) {
          for (const event of await fullLog(b.url, id)) {
            if (event.type === 'channel.received') applied.set(event.data.messageId, (applied.get(event.data.messageId) ?? 0) + 1);
          }
        }
        expect(applied.size).toBe(total);
        expect((await groupState()).pending).toBe(0);
      },
      { timeout: 60_000, interval: 200 },
    );
    expect(atKill.pending, 'the kill fell while messages were in hand').toBeGreaterThan(0);
    expect([...applied.keys()].sort()).toEqual([...sentIds].sort());
    expect([...applied.values()].filter((n) => n !== 1)).toEqual([]);
    let questions = 0;
    for (const id of receivers) questions += (await (await fetch(`${b.url}/sessions/${id}`)).json()).context.questions;
    expect(questions).toBe(total);
  }, 180_000);
});
