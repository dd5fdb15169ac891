/**
 * Channels between two `flowing serve` processes on one Redis: A serves only the sender machine (`orders`), B only
 * the receiver (`billing`). A burst of messages is sent through A; B is SIGKILLed while it delivers them, then started
 * again. Every message sent is applied exactly once (one `channel.received` per message id across the receiving
 * sessions' logs), none is lost, and nothing stays pending in B's consumer group.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BILLING, ORDERS, writeChannelMachines } from '../helpers/channel-machines.ts';
import { copyProject } from '../helpers/project.ts';
import { SHORT_LEASE_TTL_MS, startRedis, type TestRedis } from '../helpers/redis.ts';
import { fullLog, post, startServe, type ServeChild } from './takeover-harness.ts';

const SENDERS = 6;
const PER_SENDER = 50;
const KEYS = 8;

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

/** Entries of the billing group read so far and pending (handed out, not acknowledged). */
async function groupState(): Promise<{ read: number; pending: number }> {
  const groups = (await client.xinfo('GROUPS', 'flowing:channel:billing')) as unknown[][];
  const group = groups.map((fields) => Object.fromEntries(fields.map((v, i, all) => (i % 2 === 0 ? [v, all[i + 1]] : [])).filter((e) => e.length)));
  const billing = group.find((g) => g.name === 'billing');
  return { read: Number(billing?.['entries-read'] ?? 0), pending: Number(billing?.pending ?? 0) };
}

describe('channels across two flowing serve processes on one Redis', () => {
  it('the receiving process SIGKILLed mid-burst and restarted: every message applied exactly once, none lost', async () => {
    const a = await serve(await projectWith([ORDERS]));
    const billingDir = await projectWith([BILLING]);
    let b = await serve(billingDir);

    const senders: string[] = [];
    for (let s = 0; s < SENDERS; s++) {
      const created = await post(`${a.url}/sessions`, { machine: 'orders' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      senders.push(created.body.sessionId);
    }
    const burst = Promise.all(
      senders.map(async (sessionId, s) => {
        for (let i = 0; i < PER_SENDER; i++) {
          const sent = await post(`${a.url}/sessions/${sessionId}/events`, {
            type: 'ASK_BILLING',
            orderId: `K${(s * PER_SENDER + i) % KEYS}`,
            question: `q${s}-${i}`,
          });
          expect(sent.status, JSON.stringify(sent.body)).toBe(200);
        }
      }),
    );
    // Kill the receiver while it has messages in hand: some applied, some read and not yet acknowledged.
    await vi.waitFor(
      async () => {
        const state = await groupState();
        expect(state.read).toBeGreaterThanOrEqual(40);
        expect(state.pending).toBeGreaterThan(0);
      },
      { timeout: 30_000, interval: 5 },
    );
    await b.kill();
    const atKill = await groupState();
    await burst;
    b = await serve(billingDir);

    const total = SENDERS * PER_SENDER;
    const sentIds: string[] = [];
    for (const sessionId of senders) {
      for (const event of await fullLog(a.url, sessionId)) if (event.type === 'channel.sent') sentIds.push(event.data.messageId);
    }
    expect(sentIds).toHaveLength(total);
    const receivers = Array.from({ length: KEYS }, (_, k) => `billing--K${k}`);
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
