import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, type RuntimeEvent } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { loopMachine } from '../helpers/runtime-machines.ts';

const ofType = (events: readonly RuntimeEvent[], type: string) => events.filter((e) => e.type === type);

describe('the step limit counts the steps of one turn, not of a lifetime', () => {
  it('answers 400 questions in one session under the default limit of 1,000 steps', async () => {
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
    const session = await runtime.createSession(orderSupport);
    for (let i = 0; i < 400; i++) {
      const result = await session.send({ type: 'USER_MESSAGE', text: `is there anything new, question ${i}?` });
      expect(result, `question ${i}`).toMatchObject({ applied: true });
    }
    const snapshot = await session.snapshot();
    expect(snapshot.status).toBe('waiting');
    expect(snapshot.step).toBeGreaterThan(1_000);
  });

  it('refuses the event of a runaway turn with STEP_LIMIT, goes back to the state before it and takes the next event', async () => {
    const { definition } = loopMachine();
    const runtime = createRuntime({ machines: [definition], store: createMemoryStore(), limits: { stepsPerTurn: 10 } });
    const session = await runtime.createSession(definition);
    expect(await session.send({ type: 'RUN', n: 3 })).toMatchObject({ applied: true });
    const before = await session.snapshot();
    expect(before.context).toMatchObject({ n: 3, count: 3 });

    const refused = await session.send({ type: 'RUN', n: 50 });
    expect(refused).toMatchObject({ applied: false, code: 'STEP_LIMIT', details: { stepsPerTurn: 10 } });
    expect((refused as { message: string }).message).toContain('limits.stepsPerTurn is 10');
    const after = await session.snapshot();
    expect(after.status).toBe('waiting');
    expect(after.state).toBe('idle');
    expect(after.context).toEqual(before.context);
    expect(after.step).toBe(before.step);
    const events = await session.events();
    expect(ofType(events, 'transition.rejected').at(-1)?.data).toMatchObject({ event: 'RUN', code: 'STEP_LIMIT' });
    expect(ofType(events, 'error').at(-1)?.data).toMatchObject({ code: 'STEP_LIMIT', recoverable: true });

    // The session stays usable: the next turn starts from the state before the refused one.
    expect(await session.send({ type: 'RUN', n: 4 })).toMatchObject({ applied: true });
    expect((await session.snapshot()).context).toMatchObject({ n: 4, count: 4 });
  });

  it('takes the bound from the spec (limits.stepsPerTurn) over the runtime default', async () => {
    const { definition } = loopMachine({ stepsPerTurn: 5 });
    const runtime = createRuntime({ machines: [definition], store: createMemoryStore(), limits: { stepsPerTurn: 1_000 } });
    const session = await runtime.createSession(definition);
    expect(await session.send({ type: 'RUN', n: 2 })).toMatchObject({ applied: true });
    expect(await session.send({ type: 'RUN', n: 8 })).toMatchObject({ applied: false, code: 'STEP_LIMIT', details: { stepsPerTurn: 5 } });
    expect(await session.send({ type: 'RUN', n: 2 })).toMatchObject({ applied: true });
  });

  it('refuses a limit that is not a number of at least 1', () => {
    expect(() => createRuntime({ machines: [orderSupport], limits: { stepsPerTurn: 0 } })).toThrow(
      /stepsPerTurn must be a number of at least 1/,
    );
  });
});
