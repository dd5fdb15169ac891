import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createVirtualClock, Deadline, defineTool, FlowingError } from '@flowing/runtime';
import { attemptTool } from '../../runtime/calls/tool-attempt.ts';
import { sleep } from '../../runtime/deadline.ts';

const echo = defineTool({
  name: 'echo',
  description: 'answers at once',
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  async run(input, { signal }) {
    if (signal.aborted) throw new Error('aborted before it ran');
    return input;
  },
});

describe('Deadline: the one stop mechanism of tools, model calls and waits', () => {
  it('leaves no listener on a long-lived caller signal and no timer on the clock after 10,000 calls', async () => {
    const clock = createVirtualClock();
    const caller = new AbortController();
    const session = new Deadline(clock, { parent: caller.signal });
    for (let i = 0; i < 10_000; i++) {
      const call = session.child();
      // What a tool call does: an attempt with a timeout (its signal read by the tool), a backoff wait, the end;
      // every other call hangs its attempt straight off the caller's signal, as `fromTool` does under bare XState.
      await attemptTool(echo, { n: i }, { idempotencyKey: `k${i}`, deadline: i % 2 === 0 ? call : caller.signal, timeoutMs: 1_000, clock });
      const waiting = sleep(clock, 5, call);
      await clock.advance(5);
      await waiting;
      call.dispose();
    }
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1); // the session's own, removed by its dispose
    expect(clock.pending).toBe(0);
    session.dispose();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('aborts children with the parent reason, times out on the virtual clock, and re-arms on touch', async () => {
    const clock = createVirtualClock();
    const parent = new Deadline(clock);
    const child = parent.child(100, () => new FlowingError('LLM_TIMEOUT', 'silent for 100 ms'));
    await clock.advance(60);
    child.touch();
    await clock.advance(60);
    expect(child.isAborted).toBe(false);
    await clock.advance(50);
    expect(child.reason?.code).toBe('LLM_TIMEOUT');
    expect(child.signal.aborted).toBe(true);
    const other = parent.child();
    parent.abort(new FlowingError('CANCELLED', 'the session was cancelled'));
    await expect(other.aborted).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(other.signal.reason).toMatchObject({ code: 'CANCELLED' });
  });

  it('turns a caller signal aborted with a foreign reason into CANCELLED', () => {
    const caller = new AbortController();
    const deadline = new Deadline(createVirtualClock(), { parent: caller.signal });
    caller.abort(new Error('client went away'));
    expect(deadline.reason).toMatchObject({ code: 'CANCELLED' });
  });
});
