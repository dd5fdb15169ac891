import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, defineTool, type RuntimeEvent } from '@flowing/runtime';
import { settle } from '../helpers/runtime-clock.ts';
import { singleToolMachine } from '../helpers/runtime-machines.ts';

const echo = defineTool({ name: 'echo', description: 'answers at once', input: z.object({ n: z.number() }), output: z.object({ n: z.number() }), idempotent: true, async run(input) { return input; } });

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
        session.subscribe(0, (e) => { known = e.seq; });
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
    session.subscribe(0, () => { throw new Error('bad listener'); });
    session.subscribe(0, (e) => seen.push(e.seq));
    await session.send({ type: 'RUN', args: { n: 1 } });
    await settle();
    expect(seen).toEqual((await session.events()).map((e) => e.seq));
  });
});
