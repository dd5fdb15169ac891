import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, defineTool, ToolError, type AnyMachineDefinition, type RuntimeEvent } from '@flowing/runtime';
import { createVirtualClock, settle } from '@flowing/runtime';
import { approvalMachine, gateTool, refusalMachine, singleToolMachine } from '../helpers/runtime-machines.ts';

const data = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

function flaky(options: { idempotent: boolean; failures: number; retries?: number }) {
  const calls = { count: 0 };
  const tool = defineTool({
    name: 'flaky',
    description: 'fails a few times',
    input: z.object({}),
    output: z.object({ n: z.number() }),
    idempotent: options.idempotent,
    retries: options.retries ?? 2,
    timeoutMs: 1_000,
    async run() {
      calls.count++;
      if (calls.count <= options.failures) throw new Error(`glitch ${calls.count}`);
      return { n: calls.count };
    },
  });
  return { tool, calls };
}

async function runOnce(
  machine: AnyMachineDefinition,
  options: Parameters<typeof createRuntime>[0] extends infer O ? Partial<O> : never = {},
) {
  const runtime = createRuntime({
    machines: [machine],
    store: createMemoryStore(),
    random: () => 0.5,
    limits: { retryBaseMs: 100 },
    ...options,
  });
  const session = await runtime.createSession(machine);
  return { runtime, session };
}

describe('tool wrapper', () => {
  it('aborts a hanging tool at its timeout; the tool observes its signal aborted', async () => {
    const clock = createVirtualClock();
    let seen: AbortSignal | undefined;
    const hang = defineTool({
      name: 'hang',
      description: 'never answers',
      input: z.object({}),
      output: z.object({}),
      timeoutMs: 5_000,
      idempotent: false,
      run: (_input, { signal }) => {
        seen = signal;
        return new Promise(() => {});
      },
    });
    const { session } = await runOnce(singleToolMachine(hang), { clock });
    const result = session.send({ type: 'RUN', args: {} });
    await settle();
    expect(seen?.aborted).toBe(false);
    await clock.advance(5_000);
    expect(seen?.aborted).toBe(true);
    expect(await result).toMatchObject({ applied: true, state: 'idle' });
    expect((await session.snapshot()).context).toMatchObject({ error: 'TOOL_TIMEOUT' });
    const events = await session.events();
    expect(data(events, 'tool.failed')[0]).toMatchObject({ tool: 'hang', error: { code: 'TOOL_TIMEOUT' }, attempts: 1 });
    // Not idempotent: the request may have reached the service, so the outcome is flagged and never retried (B5).
    expect(data(events, 'tool.unknown_outcome')).toHaveLength(1);
    expect(data(events, 'tool.retry')).toHaveLength(0);
  });

  it('calls an idempotent tool that fails twice then succeeds 3 times, with growing backoff', async () => {
    const clock = createVirtualClock();
    const { tool, calls } = flaky({ idempotent: true, failures: 2 });
    const { session } = await runOnce(singleToolMachine(tool), { clock });
    const result = session.send({ type: 'RUN', args: {} });
    await clock.advance(10_000);
    expect(await result).toMatchObject({ applied: true });
    expect(calls.count).toBe(3);
    expect((await session.snapshot()).context).toMatchObject({ result: { n: 3 } });
    const events = await session.events();
    expect(data(events, 'tool.retry').map((d) => d.delayMs)).toEqual([75, 150]);
    expect(data(events, 'tool.completed')[0]).toMatchObject({ attempts: 3 });
  });

  it('calls a failing non-idempotent tool exactly once', async () => {
    const { tool, calls } = flaky({ idempotent: false, failures: 5 });
    const { session } = await runOnce(singleToolMachine(tool));
    await session.send({ type: 'RUN', args: {} });
    expect(calls.count).toBe(1);
    expect((await session.snapshot()).context).toMatchObject({ error: 'TOOL_FAILED' });
    expect(data(await session.events(), 'tool.retry')).toHaveLength(0);
  });

  it('retries a non-idempotent tool when the call carries an idempotency key', async () => {
    const clock = createVirtualClock();
    const { tool, calls } = flaky({ idempotent: false, failures: 1 });
    const { session } = await runOnce(singleToolMachine(tool, { idempotencyKey: 'order-7' }), { clock });
    const result = session.send({ type: 'RUN', args: {} });
    await clock.advance(1_000);
    await result;
    expect(calls.count).toBe(2);
    expect(data(await session.events(), 'tool.started')[0]).toMatchObject({ idempotencyKey: 'order-7' });
  });

  it('does not retry a declared tool error and hands its code to onError', async () => {
    let count = 0;
    const tool = defineTool({
      name: 'lookup',
      description: 'declared error',
      input: z.object({}),
      output: z.object({}),
      idempotent: true,
      errors: { NOT_FOUND: 'no such thing' },
      async run() {
        count++;
        throw new ToolError('NOT_FOUND', 'nothing here');
      },
    });
    const { session } = await runOnce(singleToolMachine(tool));
    await session.send({ type: 'RUN', args: {} });
    expect(count).toBe(1);
    expect((await session.snapshot()).context).toMatchObject({ error: 'NOT_FOUND' });
  });

  it('reports an output contract breach as TOOL_CONTRACT with the zod issue', async () => {
    const tool = defineTool({
      name: 'sloppy',
      description: 'returns the wrong shape',
      input: z.object({}),
      output: z.object({ total: z.number() }),
      async run() {
        return { total: 'lots' } as never;
      },
    });
    const { session } = await runOnce(singleToolMachine(tool));
    await session.send({ type: 'RUN', args: {} });
    expect((await session.snapshot()).context).toMatchObject({ error: 'TOOL_CONTRACT' });
    const failed = data(await session.events(), 'tool.failed')[0]!;
    expect(failed.error.details.side).toBe('output');
    expect(failed.error.details.issues[0]).toMatchObject({ path: ['total'], code: 'invalid_type' });
  });

  it('refuses input that breaks the contract without running the tool', async () => {
    let count = 0;
    const tool = defineTool({
      name: 'strict',
      description: 'needs an id',
      input: z.object({ id: z.string().min(1) }),
      output: z.object({}),
      async run() {
        count++;
        return {};
      },
    });
    const { session } = await runOnce(singleToolMachine(tool));
    await session.send({ type: 'RUN', args: { id: 42 } });
    expect(count).toBe(0);
    const failed = data(await session.events(), 'tool.failed')[0]!;
    expect(failed.error).toMatchObject({ code: 'TOOL_CONTRACT', details: { side: 'input' } });
    expect(failed.error.details.issues[0].path).toEqual(['id']);
  });

  it('makes as many attempts as configured for a tool that always times out, and no more (B5)', async () => {
    const clock = createVirtualClock();
    let count = 0;
    const tool = defineTool({
      name: 'slow',
      description: 'always too slow',
      input: z.object({}),
      output: z.object({}),
      idempotent: true,
      retries: 2,
      timeoutMs: 1_000,
      run: () => {
        count++;
        return new Promise<Record<string, never>>(() => {});
      },
    });
    const { session } = await runOnce(singleToolMachine(tool), { clock });
    const start = clock.now();
    const result = session.send({ type: 'RUN', args: {} });
    await clock.advance(60_000);
    await result;
    expect(count).toBe(3);
    const events = await session.events();
    const failed = data(events, 'tool.failed')[0]!;
    const backoff = data(events, 'tool.retry').reduce((sum, d) => sum + d.delayMs, 0);
    expect(failed.attempts).toBe(3);
    expect(failed.durationMs).toBeLessThanOrEqual((3 * 1_000 + backoff) * 1.1);
    expect(failed.durationMs).toBe(3 * 1_000 + backoff);
    expect(start).toBeLessThan(clock.now());
  });
});

describe('approvals', () => {
  function payTool() {
    const runs: unknown[] = [];
    const tool = defineTool({
      name: 'pay',
      description: 'moves money',
      risk: 'high',
      idempotent: false,
      input: z.object({ amount: z.number() }),
      output: z.object({ receipt: z.string() }),
      async run(input) {
        runs.push(input);
        return { receipt: `r-${runs.length}` };
      },
    });
    return { tool, runs };
  }

  it('asks for approval with the exact args and their hash, and runs the tool once after APPROVE', async () => {
    const { tool, runs } = payTool();
    const { session } = await runOnce(approvalMachine(tool));
    await session.send({ type: 'REQUEST', amount: 25 });
    expect(runs).toHaveLength(0);
    const requested = data(await session.events(), 'approval.requested')[0]!;
    expect(requested).toMatchObject({ tool: 'pay', args: { amount: 25 }, state: 'await_approval' });
    expect(requested.argsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: 'idle' });
    expect(runs).toEqual([{ amount: 25 }]);
    const events = await session.events();
    expect(data(events, 'approval.decided')[0]).toMatchObject({ decision: 'approved', argsHash: requested.argsHash });
    expect((await session.snapshot()).context).toMatchObject({ paid: 'r-1' });
  });

  it('never runs the tool after REJECT', async () => {
    const { tool, runs } = payTool();
    const { session } = await runOnce(approvalMachine(tool));
    await session.send({ type: 'REQUEST', amount: 25 });
    expect(await session.send({ type: 'REJECT', reason: 'too much' })).toMatchObject({ applied: true, state: 'idle' });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: false, code: 'NO_TRANSITION' });
    expect(runs).toHaveLength(0);
    expect(data(await session.events(), 'approval.decided')[0]).toMatchObject({ decision: 'rejected', reason: 'too much' });
    expect((await session.snapshot()).approval).toMatchObject({ decision: 'rejected', reason: 'too much' });
  });

  it('refuses to run a high-risk tool that no approval covers (APPROVAL_REQUIRED)', async () => {
    const { tool, runs } = payTool();
    const { session } = await runOnce(singleToolMachine(tool));
    await session.send({ type: 'RUN', args: { amount: 5 } });
    expect(runs).toHaveLength(0);
    expect((await session.snapshot()).context).toMatchObject({ error: 'APPROVAL_REQUIRED' });
  });
});

describe('limits and cancel', () => {
  it('keeps in-flight calls across sessions at the concurrency limit', async () => {
    const gate = gateTool();
    const machine = refusalMachine(gate.tool);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore(), limits: { maxConcurrentCalls: 1 } });
    const a = await runtime.createSession(machine);
    const b = await runtime.createSession(machine);
    const sends = [a.send({ type: 'GO', n: 1 }), b.send({ type: 'GO', n: 1 })];
    await settle();
    expect(gate.state.calls).toBe(1);
    void gate.release();
    await settle();
    expect(gate.state.calls).toBe(2);
    void gate.release();
    expect(await Promise.all(sends)).toMatchObject([{ applied: true }, { applied: true }]);
  });

  it('cancel aborts the in-flight call (its signal fires) and ends the session as cancelled', async () => {
    const gate = gateTool();
    const machine = refusalMachine(gate.tool);
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    const running = session.send({ type: 'GO', n: 1 });
    await settle();
    expect(gate.state.signal?.aborted).toBe(false);
    await session.cancel('user left');
    expect(gate.state.signal?.aborted).toBe(true);
    await running;
    const snapshot = await session.snapshot();
    expect(snapshot.status).toBe('cancelled');
    const events = await session.events();
    expect(data(events, 'session.cancelled')[0]).toMatchObject({ reason: 'user left' });
    expect(events.every((e, i) => e.seq === i + 1)).toBe(true);
  });
});
