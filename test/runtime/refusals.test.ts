import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, type RuntimeEvent } from '@flowing/runtime';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';

async function setup() {
  const gate = gateTool();
  const machine = refusalMachine(gate.tool);
  const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
  const session = await runtime.createSession(machine);
  const lastRejection = async () => {
    const events = await session.events();
    return events.filter((e) => e.type === 'transition.rejected').at(-1) as RuntimeEvent<Record<string, unknown>> | undefined;
  };
  return { gate, machine, runtime, session, lastRejection };
}

describe('send refuses what it does not apply, with a code and a transition.rejected event', () => {
  it('refuses an undeclared event type with UNKNOWN_EVENT', async () => {
    const { session, lastRejection } = await setup();
    const result = await session.send({ type: 'NOPE' } as never);
    expect(result).toMatchObject({ applied: false, code: 'UNKNOWN_EVENT' });
    expect((await lastRejection())?.data).toMatchObject({ event: 'NOPE', code: 'UNKNOWN_EVENT', states: ['idle'] });
  });

  it('refuses a payload that does not match its schema with INVALID_PAYLOAD and the zod issues', async () => {
    const { session, lastRejection } = await setup();
    const result = await session.send({ type: 'GO', n: 'three' } as never);
    expect(result).toMatchObject({ applied: false, code: 'INVALID_PAYLOAD' });
    if (result.applied) throw new Error('applied');
    expect((result.details as { issues: Array<{ path: string[] }> }).issues[0]!.path).toEqual(['n']);
    expect((await lastRejection())?.data).toMatchObject({ event: 'GO', code: 'INVALID_PAYLOAD' });
  });

  it('refuses an event no active state handles with NO_TRANSITION', async () => {
    const { session, lastRejection } = await setup();
    expect(await session.send({ type: 'PING' })).toMatchObject({ applied: false, code: 'NO_TRANSITION' });
    expect((await lastRejection())?.data).toMatchObject({ event: 'PING', code: 'NO_TRANSITION', states: ['idle'] });
  });

  it('refuses a handled event whose guards are all false with GUARD_REJECTED', async () => {
    const { session, lastRejection } = await setup();
    expect(await session.send({ type: 'GO', n: 0 })).toMatchObject({ applied: false, code: 'GUARD_REJECTED' });
    expect((await lastRejection())?.data).toMatchObject({ event: 'GO', code: 'GUARD_REJECTED' });
    expect((await session.snapshot()).state).toBe('idle');
  });

  it('refuses events after a final state with SESSION_FINISHED', async () => {
    const { session, lastRejection } = await setup();
    expect(await session.send({ type: 'FINISH' })).toMatchObject({ applied: true, status: 'done' });
    expect(await session.send({ type: 'GO', n: 1 })).toMatchObject({ applied: false, code: 'SESSION_FINISHED' });
    expect((await lastRejection())?.data).toMatchObject({ event: 'GO', code: 'SESSION_FINISHED' });
  });

  it('refuses events after cancel with SESSION_CANCELLED', async () => {
    const { session, lastRejection } = await setup();
    await session.cancel('test over');
    expect((await session.snapshot()).status).toBe('cancelled');
    expect(await session.send({ type: 'GO', n: 1 })).toMatchObject({ applied: false, code: 'SESSION_CANCELLED' });
    expect((await lastRejection())?.data).toMatchObject({ code: 'SESSION_CANCELLED' });
  });

  it('refuses with BUSY when another event is being applied and the caller asks not to queue', async () => {
    const { session, gate, lastRejection } = await setup();
    const running = session.send({ type: 'GO', n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(gate.state.calls).toBe(1);
    expect(await session.send({ type: 'FINISH' }, { queue: false })).toMatchObject({ applied: false, code: 'BUSY' });
    expect((await lastRejection())?.data).toMatchObject({ event: 'FINISH', code: 'BUSY', states: ['working'] });
    void gate.release();
    expect(await running).toMatchObject({ applied: true, state: 'idle' });
  });

  it('queues a second event behind the first by default and applies both in order', async () => {
    const { session, gate } = await setup();
    const first = session.send({ type: 'GO', n: 1 });
    const second = session.send({ type: 'FINISH' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    void gate.release();
    expect(await first).toMatchObject({ applied: true, state: 'idle' });
    expect(await second).toMatchObject({ applied: true, status: 'done' });
  });

  it('leaves the stored snapshot unchanged by a refusal', async () => {
    const { session } = await setup();
    const before = await session.snapshot();
    await session.send({ type: 'GO', n: -5 });
    const after = await session.snapshot();
    expect(after.state).toEqual(before.state);
    expect(after.context).toEqual(before.context);
    expect(after.step).toBe(before.step);
  });
});
