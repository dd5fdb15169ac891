import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, defineTool, type SessionStore } from '@flowing/runtime';
import { singleToolMachine } from '../helpers/runtime-machines.ts';

describe('cancel while a non-idempotent call waits for its start to be stored', () => {
  it('never runs the tool, and records the call as cancelled', async () => {
    let runs = 0;
    const charge = defineTool({
      name: 'charge',
      description: 'moves money',
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      idempotent: false,
      async run() {
        runs++;
        return { ok: true };
      },
    });
    const inner = createMemoryStore();
    let slowCommits = false;
    const store: SessionStore = {
      ...inner,
      async commit(request) {
        if (slowCommits) await new Promise((resolve) => setTimeout(resolve, 50));
        return inner.commit(request);
      },
    };
    const definition = singleToolMachine(charge);
    const runtime = createRuntime({ machines: [definition], store });
    const session = await runtime.createSession(definition);
    slowCommits = true;
    const sending = session.send({ type: 'RUN', args: {} } as never);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await session.cancel('customer hung up');
    await sending;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(runs).toBe(0);
    const events = await session.events();
    const failed = events.find((e) => e.type === 'tool.failed');
    expect((failed?.data as { error: { code: string } } | undefined)?.error.code).toBe('CANCELLED');
    expect(events.some((e) => e.type === 'tool.completed')).toBe(false);
    expect((await session.snapshot()).status).toBe('cancelled');
  });
});

describe('send with queue: false', () => {
  it('applies an event sent right after the previous send finished (BUSY only while one is in progress)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = defineTool({
      name: 'slow',
      description: 'waits for the test the first time',
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      idempotent: true,
      async run() {
        await gate;
        return { ok: true };
      },
    });
    const definition = singleToolMachine(slow);
    const runtime = createRuntime({ machines: [definition], store: createMemoryStore() });
    const session = await runtime.createSession(definition);
    const first = session.send({ type: 'RUN', args: {} } as never, { queue: false });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const busy = await session.send({ type: 'RUN', args: {} } as never, { queue: false });
    expect(busy).toMatchObject({ applied: false, code: 'BUSY' });
    release();
    expect((await first).applied).toBe(true);
    const next = await session.send({ type: 'RUN', args: {} } as never, { queue: false });
    expect(next.applied).toBe(true);
  });
});
