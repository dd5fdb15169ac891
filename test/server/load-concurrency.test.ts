import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { startTestServer, type TestServer } from './harness.ts';

// L3 (RELIABILITY.md 4.6): a concurrency limit N, offered N+10 runs at once.
const N = 4;
const OFFERED = N + 10;
/** Long enough that every offered request arrives while the first N runs are still in their tool. */
const TOOL_MS = 400;

/** resolve_user with the same contract, slowed down, counting how many of its executions overlap. */
function countingResolveUser() {
  const seen = { active: 0, max: 0, runs: 0 };
  const base = orderSupport.tools.resolve_user!;
  const tool = defineTool({
    name: base.name,
    description: base.description,
    input: base.input,
    output: base.output,
    timeoutMs: base.timeoutMs,
    idempotent: base.idempotent,
    async run(input, context) {
      seen.runs++;
      seen.active++;
      seen.max = Math.max(seen.max, seen.active);
      try {
        await new Promise((resolve) => setTimeout(resolve, TOOL_MS));
        return await base.run(input, context);
      } finally {
        seen.active--;
      }
    },
  });
  return { tool, seen };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function offerRuns(overflow: 'queue' | 'refuse') {
  const counting = countingResolveUser();
  server = await startTestServer([orderSupport], {
    rateLimit: { client: false, session: false },
    runtime: { tools: { resolve_user: counting.tool }, limits: { maxConcurrentCalls: N, overflow } },
  });
  const ids = Array.from({ length: OFFERED }, (_, i) => `l3-${overflow}-${i}`);
  for (const sessionId of ids)
    expect((await server.call('POST', '/sessions', { body: { machine: 'order-support', sessionId } })).status).toBe(201);
  const seqBefore = await Promise.all(ids.map(async (id) => (await server!.call('GET', `/sessions/${id}`)).body.seq as number));
  const answers = await Promise.all(
    ids.map((id) => server!.call('POST', `/sessions/${id}/events`, { body: { type: 'USER_MESSAGE', text: 'where is my order A1001' } })),
  );
  const seqAfter = await Promise.all(ids.map(async (id) => (await server!.call('GET', `/sessions/${id}`)).body.seq as number));
  return { answers, seen: counting.seen, seqBefore, seqAfter };
}

describe('L3: concurrency limit for tool and model calls', () => {
  it('queues the runs beyond the limit by default: all N+10 are applied and at most N tools execute at once', async () => {
    const { answers, seen } = await offerRuns('queue');
    expect(answers.map((a) => a.status)).toEqual(Array(OFFERED).fill(200));
    expect(answers.every((a) => a.body.applied === true && a.body.status === 'waiting')).toBe(true);
    expect(seen.runs).toBe(OFFERED);
    // Never above N, and the limit was reached (so the runs really overlapped).
    expect(seen.max).toBe(N);
    console.log(
      `L3 queue: ${OFFERED} runs offered with maxConcurrentCalls ${N}: ${seen.runs} tool executions, at most ${seen.max} at once`,
    );
  });

  it("with overflow 'refuse' applies N runs and answers the other 10 with 429 RUNTIME_SATURATED and Retry-After, storing nothing for them", async () => {
    const { answers, seen, seqBefore, seqAfter } = await offerRuns('refuse');
    const applied = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(applied).toHaveLength(N);
    expect(refused).toHaveLength(OFFERED - N);
    for (const answer of refused) {
      expect(answer.body).toMatchObject({ applied: false, code: 'RUNTIME_SATURATED', details: { retryAfterSeconds: 1 } });
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    expect(seen.runs).toBe(N);
    expect(seen.max).toBeLessThanOrEqual(N);
    // A refused send never reached its session: its log did not grow.
    answers.forEach((answer, i) => {
      if (answer.status === 429) expect(seqAfter[i]).toBe(seqBefore[i]);
      else expect(seqAfter[i]).toBeGreaterThan(seqBefore[i]!);
    });
    console.log(
      `L3 refuse: ${OFFERED} runs offered with maxConcurrentCalls ${N}: ${applied.length} applied, ${refused.length} refused with 429 (Retry-After: 1)`,
    );
  });

  it('admits runs again once the runs in progress are quiet', async () => {
    await offerRuns('refuse');
    const retry = await server!.call('POST', '/sessions/l3-refuse-13/events', {
      body: { type: 'USER_MESSAGE', text: 'where is my order A1001' },
    });
    expect(retry.status).toBe(200);
    expect(retry.body.applied).toBe(true);
  });
});
