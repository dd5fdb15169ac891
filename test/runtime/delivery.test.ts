import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, defineTool, type RuntimeEvent, type SessionStore } from '@flowing/runtime';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { settle } from '@flowing/runtime';
import { createBackend, type StoreKind } from '../helpers/stores.ts';
import { singleToolMachine } from '../helpers/runtime-machines.ts';

const echo = defineTool({
  name: 'echo',
  description: 'answers at once',
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  idempotent: true,
  async run(input) {
    return input;
  },
});

type Op = { kind: 'send'; n: number } | { kind: 'subscribe'; from: number } | { kind: 'tick' };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('send' as const), n: fc.integer({ min: 0, max: 100 }) }),
  fc.record({ kind: fc.constant('subscribe' as const), from: fc.nat({ max: 60 }) }),
  fc.record({ kind: fc.constant('tick' as const) }),
);

describe('subscribe(fromSeq) delivers every later event exactly once, in order', () => {
  it('holds for subscribers from 0, from the middle and during bursts, under random interleavings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const machine = singleToolMachine(echo);
        const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
        const session = await runtime.createSession(machine);
        let known = 0;
        session.subscribe(0, (e) => {
          known = e.seq;
        });
        const subscribers: Array<{ from: number; seen: RuntimeEvent[] }> = [];
        const subscribe = (from: number) => {
          const sub = { from, seen: [] as RuntimeEvent[] };
          subscribers.push(sub);
          session.subscribe(from, (e) => sub.seen.push(e));
        };
        subscribe(0);
        const sends: Array<Promise<unknown>> = [];
        for (const o of ops) {
          if (o.kind === 'send') sends.push(session.send({ type: 'RUN', args: { n: o.n } }));
          else if (o.kind === 'subscribe') subscribe(Math.min(o.from, known));
          else await new Promise((resolve) => setImmediate(resolve));
        }
        await Promise.all(sends);
        await settle();
        const log = await session.events();
        expect(log.every((e, i) => e.seq === i + 1)).toBe(true);
        for (const sub of subscribers) {
          expect(sub.seen.map((e) => e.seq)).toEqual(log.filter((e) => e.seq > sub.from).map((e) => e.seq));
          expect(sub.seen.every((e) => Object.isFrozen(e))).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('does not leave live events committed as a catch-up goes live (sends, a tick, two subscribers from 0, a send)', async () => {
    const machine = singleToolMachine(echo);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    const subscribers: number[][] = [];
    const subscribe = () => {
      const seen: number[] = [];
      subscribers.push(seen);
      session.subscribe(0, (e) => {
        seen.push(e.seq);
      });
    };
    subscribe();
    const run = () => session.send({ type: 'RUN', args: { n: 0 } });
    const sends = [run(), run(), run(), run()];
    await new Promise((resolve) => setImmediate(resolve));
    subscribe();
    sends.push(run());
    subscribe();
    await Promise.all(sends);
    await settle();
    const log = (await session.events()).map((e) => e.seq);
    for (const seen of subscribers) expect(seen).toEqual(log);
  });

  it('stops delivering after unsubscribe', async () => {
    const machine = singleToolMachine(echo);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    const seen: number[] = [];
    const stop = session.subscribe(0, (e) => seen.push(e.seq));
    await settle();
    stop();
    await session.send({ type: 'RUN', args: { n: 1 } });
    await settle();
    expect(seen).toEqual([1, 2]);
  });

  it('keeps delivering to others when one listener throws', async () => {
    const machine = singleToolMachine(echo);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    const seen: number[] = [];
    session.subscribe(0, () => {
      throw new Error('bad listener');
    });
    session.subscribe(0, (e) => seen.push(e.seq));
    await session.send({ type: 'RUN', args: { n: 1 } });
    await settle();
    expect(seen).toEqual((await session.events()).map((e) => e.seq));
  });
});

/** An echo that answers after a random short wait, so commits and reads of the store overlap. */
const slowEcho = defineTool({
  name: 'echo',
  description: 'answers after a moment',
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  idempotent: true,
  async run(input) {
    await new Promise((resolve) => setTimeout(resolve, input.n % 3));
    return input;
  },
});

type SharedOp = { kind: 'send'; via: 0 | 1; n: number } | { kind: 'subscribe'; via: 0 | 1; from: number } | { kind: 'tick'; ms: number };

const sharedOp: fc.Arbitrary<SharedOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('send' as const),
      via: fc.constantFrom(0 as const, 1 as const),
      n: fc.integer({ min: 0, max: 100 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('subscribe' as const),
      via: fc.constantFrom(0 as const, 1 as const),
      from: fc.nat({ max: 40 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 4 }) }) },
);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/**
 * Two runtimes on one shared store (two connections, as two processes have): events are sent through either, and
 * subscribers on either see their own runtime's commits at once, the other's through the store's feed (SQLite polls,
 * Redis reads the stream) and everything before their start through a catch-up read. So deliveries really arrive
 * buffered (during a catch-up read), late (the feed trails the commit), twice (commit and feed) and out of order (a
 * local commit overtakes the feed's older events).
 */
describe.each(['sqlite', 'redis'] as StoreKind[])('subscribe(fromSeq) on a store shared by two runtimes: %s', (kind) => {
  it('delivers every event exactly once, in order, to subscribers on both, under random interleavings', async () => {
    const arrivals: Arrivals = { buffered: 0, duplicate: 0, outOfOrder: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(sharedOp, { minLength: 4, maxLength: 24 }), async (ops) => {
        const backend = await createBackend(kind, redis, { sqliteReadPageSize: 4 });
        try {
          const machine = singleToolMachine(slowEcho);
          const runtimes = [0, 1].map(() => createRuntime({ machines: [machine], store: observed(backend.open(), arrivals) }));
          const created = await runtimes[0]!.createSession(machine);
          const sessions = runtimes.map((r) => r.session(created.id));
          let known = 0;
          sessions[0]!.subscribe(0, (e) => {
            known = Math.max(known, e.seq);
          });
          const subscribers: Array<{ from: number; seen: RuntimeEvent[]; stop: () => void }> = [];
          const subscribe = (via: 0 | 1, from: number) => {
            const sub = { from, seen: [] as RuntimeEvent[], stop: () => {} };
            subscribers.push(sub);
            sub.stop = sessions[via]!.subscribe(from, (e) => sub.seen.push(e));
          };
          subscribe(0, 0);
          subscribe(1, 0);
          // Sends go one after another (the two runtimes do not serialise one session between them; that is the
          // server's lease), while subscriptions start at any moment in between.
          let chain: Promise<unknown> = Promise.resolve();
          for (const o of ops) {
            if (o.kind === 'send') chain = chain.then(() => sessions[o.via]!.send({ type: 'RUN', args: { n: o.n } }));
            else if (o.kind === 'subscribe') subscribe(o.via, Math.min(o.from, known));
            else await new Promise((resolve) => setTimeout(resolve, o.ms));
          }
          await chain;
          const log = await created.events();
          expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
          const last = log.length;
          // Every subscriber has caught up with the last event (the checks below then say what each one saw).
          await vi.waitFor(() => expect(subscribers.map((s) => s.seen.at(-1)?.seq ?? s.from)).toEqual(subscribers.map(() => last)), {
            timeout: 3_000,
            interval: 5,
          });
          await settle();
          for (const sub of subscribers) {
            sub.stop();
            expect(sub.seen.map((e) => e.seq)).toEqual(log.filter((e) => e.seq > sub.from).map((e) => e.seq));
            expect(sub.seen.every((e) => Object.isFrozen(e))).toBe(true);
          }
        } finally {
          await backend.remove();
        }
      }),
      { numRuns: 25 },
    );
    // The races the property is named for were reached, not only the easy path.
    expect(arrivals.buffered).toBeGreaterThan(0);
    expect(arrivals.duplicate).toBeGreaterThan(0);
    expect(arrivals.outOfOrder).toBeGreaterThan(0);
  });
});

describe.each(['sqlite', 'redis'] as StoreKind[])('a live subscriber on a shared store: %s', (kind) => {
  it("drops the feed's repeats of events its runtime already delivered without reading the store again", async () => {
    const backend = await createBackend(kind, redis);
    try {
      const arrivals: Arrivals = { buffered: 0, duplicate: 0, outOfOrder: 0 };
      const machine = singleToolMachine(echo);
      const runtime = createRuntime({ machines: [machine], store: observed(backend.open(), arrivals) });
      const session = await runtime.createSession(machine);
      const seen: number[] = [];
      const stop = session.subscribe(0, (e) => seen.push(e.seq));
      const soon = { timeout: 3_000, interval: 5 };
      await vi.waitFor(() => expect({ seen: seen.length, duplicates: arrivals.duplicate }).toEqual({ seen: 2, duplicates: 2 }), soon);
      const readsWhenLive = arrivals.reads;
      const duplicatesBefore = arrivals.duplicate;
      for (let n = 1; n <= 5; n++) await session.send({ type: 'RUN', args: { n } });
      const total = (await session.events()).length;
      // Every event the runtime committed comes back once more through the feed.
      await vi.waitFor(() => expect(arrivals.duplicate).toBeGreaterThanOrEqual(duplicatesBefore + total - 2), soon);
      await new Promise((resolve) => setTimeout(resolve, 50));
      stop();
      expect(arrivals.duplicate).toBe(duplicatesBefore + total - 2);
      expect(seen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      // One read above is `session.events()`; the subscriber itself read nothing while live.
      expect(arrivals.reads).toBe(readsWhenLive! + 1);
    } finally {
      await backend.remove();
    }
  });
});

/** How deliveries reached one runtime's subscriptions, counted by watching its store (a pass-through, not a fake). */
interface Arrivals {
  buffered: number;
  duplicate: number;
  outOfOrder: number;
  reads?: number;
}

/**
 * The store of one runtime, counting: deliveries (local or from the feed) that land while a catch-up read is in flight (buffered), feed
 * deliveries of events this runtime already delivered itself (duplicate), and feed deliveries of older events after
 * a newer local one (out of order).
 */
function observed(store: SessionStore, arrivals: Arrivals): SessionStore {
  let reading = 0;
  let newestLocal = 0;
  const local = new Set<number>();
  return {
    ...store,
    name: store.name,
    async commit(request) {
      // Marked before the write: the feed may bring them back before the commit's own answer arrives.
      for (const e of request.events) local.add(e.seq);
      try {
        await store.commit(request);
      } catch (error) {
        for (const e of request.events) local.delete(e.seq);
        throw error;
      }
      if (reading > 0 && request.events.length > 0) arrivals.buffered++;
      newestLocal = Math.max(newestLocal, request.record.seq);
    },
    async readEvents(...args) {
      arrivals.reads = (arrivals.reads ?? 0) + 1;
      reading++;
      try {
        return await store.readEvents(...args);
      } finally {
        reading--;
      }
    },
    follow(sessionId, afterSeq, listener) {
      return store.follow!(sessionId, afterSeq, (events) => {
        if (reading > 0) arrivals.buffered++;
        arrivals.duplicate += events.filter((e) => local.has(e.seq)).length;
        if (events.some((e) => !local.has(e.seq) && e.seq < newestLocal)) arrivals.outOfOrder++;
        listener(events);
      });
    },
  };
}
