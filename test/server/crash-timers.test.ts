import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { createMemoryStore, createRuntime, type MemoryStoreData, type Runtime } from '@flowing/runtime';
import { startServer, type RunningServer } from '@flowing/runtime/server';
import { createCodegen } from '@flowing/codegen';
import type { FlowSpecInput } from '@flowing/spec';
import { copyProject } from '../helpers/project.ts';
import { createVirtualClock, type VirtualClock } from '@flowing/runtime';
import { defineTestMachine } from '../helpers/runtime-machines.ts';
import { AckingClient, startServeChild, type WireEvent } from '../helpers/ledger-workload.ts';
import { within } from '../helpers/wait.ts';
import { readSse } from './sse-client.ts';

/** idle --START--> waiting --(after `ms`)--> timed_out; waiting --REPLY--> answered. */
function timedSpec(id: string, ms: number): FlowSpecInput {
  return {
    specVersion: 1,
    id,
    context: {},
    events: { START: {}, REPLY: {} },
    initial: 'idle',
    states: {
      idle: { on: { START: 'waiting' } },
      waiting: { after: { [String(ms)]: 'timed_out' }, on: { REPLY: 'answered' } },
      timed_out: { type: 'final' },
      answered: { type: 'final' },
    },
  };
}

function timedMachine(ms: number) {
  const machine = setup({}).createMachine({
    id: 'timed',
    initial: 'idle',
    states: {
      idle: { on: { START: 'waiting' } },
      waiting: { after: { [ms]: { target: 'timed_out' } }, on: { REPLY: 'answered' } },
      timed_out: { type: 'final' },
      answered: { type: 'final' },
    },
  });
  return defineTestMachine(timedSpec('timed', ms), machine, []);
}

const state = async (runtime: Runtime, id: string) => (await runtime.session(id).snapshot()).state;

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A session that entered `waiting` (after: 30 s) at clock time 1,000,000 and was copied out of its store 10 s later. */
async function crashTenSecondsIn(): Promise<{ data: MemoryStoreData; sessionId: string; now: number }> {
  const clock = createVirtualClock(1_000_000);
  const store = createMemoryStore();
  const runtime = createRuntime({ machines: [timedMachine(30_000)], store, clock });
  const session = await runtime.createSession('timed');
  const started = await session.send({ type: 'START' });
  expect(started.applied && started.status).toBe('waiting');
  await clock.advance(10_000);
  expect(await state(runtime, session.id)).toBe('waiting');
  return { data: store.exportData(), sessionId: session.id, now: clock.now() };
}

async function recoverOn(clock: VirtualClock, data: MemoryStoreData): Promise<Runtime> {
  const runtime = createRuntime({ machines: [timedMachine(30_000)], store: createMemoryStore({ data }), clock });
  server = await startServer(runtime, { port: 0, log: () => {} });
  await server.recovered;
  return runtime;
}

describe('after timers across a restart (injected clock)', () => {
  it('fires a 30 s timer of a session recovered 10 s in after the 20 s it had left, not 30 s', async () => {
    const { data, sessionId, now } = await crashTenSecondsIn();
    const clock = createVirtualClock(now);
    const runtime = await recoverOn(clock, data);
    await clock.advance(19_900);
    expect(await state(runtime, sessionId)).toBe('waiting');
    await clock.advance(200);
    expect(await state(runtime, sessionId)).toBe('timed_out');
    const fired = (await runtime.session(sessionId).events()).find((e) => e.type === 'state.changed' && e.data.state === 'timed_out')!;
    expect(fired.at).toBe(1_030_000);
    expect((await runtime.session(sessionId).snapshot()).status).toBe('done');
  });

  it('fires a timer that fell due while no process ran right after recovery', async () => {
    const { data, sessionId, now } = await crashTenSecondsIn();
    const clock = createVirtualClock(now + 60_000);
    const runtime = await recoverOn(clock, data);
    // Due now: the wake-up is armed with no delay (a manual clock runs even those only when told to, time standing still).
    await clock.advance(0);
    expect(await state(runtime, sessionId)).toBe('timed_out');
    const fired = (await runtime.session(sessionId).events()).find((e) => e.type === 'state.changed' && e.data.state === 'timed_out')!;
    expect(fired.at).toBe(now + 60_000);
  });

  it('lists a session waiting for its timer as waiting and lets an event before the deadline cancel the timer', async () => {
    const clock = createVirtualClock();
    const runtime = createRuntime({ machines: [timedMachine(30_000)], clock });
    const session = await runtime.createSession('timed');
    await session.send({ type: 'START' });
    await clock.advance(5_000);
    expect((await session.snapshot()).status).toBe('waiting');
    const reply = await session.send({ type: 'REPLY' });
    expect(reply.applied && reply.state).toBe('answered');
    await clock.advance(60_000);
    expect((await session.events()).map((e) => e.type).filter((t) => t !== 'session.started')).toEqual([
      'state.changed',
      'state.changed',
      'state.changed',
      'session.done',
    ]);
    expect(clock.pending).toBe(0);
  });

  it('fires the timer of a session no longer held in memory (no warm sessions) through the runtime wake-up', async () => {
    const clock = createVirtualClock();
    const runtime = createRuntime({ machines: [timedMachine(30_000)], clock, warmSessions: 0 });
    const session = await runtime.createSession('timed');
    await session.send({ type: 'START' });
    await clock.advance(29_999);
    expect(await state(runtime, session.id)).toBe('waiting');
    await clock.advance(1);
    expect(await state(runtime, session.id)).toBe('timed_out');
  });
});

describe('after timers across a SIGKILL of flowing serve (real child process, SQLite, system clock)', () => {
  let project: Awaited<ReturnType<typeof copyProject>>;
  beforeAll(async () => {
    project = await copyProject('flowing-timers-');
    const codegen = createCodegen({ rootDir: project.dir });
    try {
      for (const [id, ms] of [
        ['slow-timer', 8000],
        ['quick-timer', 300],
      ] as const) {
        await mkdir(join(project.dir, 'machines', id), { recursive: true });
        await writeFile(join(project.dir, 'machines', id, `${id}.flow.json`), JSON.stringify(timedSpec(id, ms), null, 2));
        const result = await codegen.generate(`machines/${id}/${id}.flow.json`);
        expect(result.problems).toEqual([]);
      }
    } finally {
      codegen.dispose();
    }
  }, 180_000);
  afterAll(async () => {
    await project?.remove();
  });

  it('re-arms a pending timer with the time left and fires one that fell due while the server was down right after restart', async () => {
    const env = { ...process.env };
    delete env.FLOWING_TOKEN;
    const args = ['--store', 'sqlite:timers.db'];
    const client = new AckingClient();
    const first = await startServeChild(project.dir, args, env);
    client.url = first.url;
    const post = (path: string, body: unknown) => fetch(`${client.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    await post('/sessions', { machine: 'slow-timer', sessionId: 'slow' });
    const slowStart = await post('/sessions/slow/events', { type: 'START' });
    expect((await slowStart.json()).status).toBe('waiting');
    await post('/sessions', { machine: 'quick-timer', sessionId: 'quick' });
    expect((await (await post('/sessions/quick/events', { type: 'START' })).json()).status).toBe('waiting');
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;

    const second = await startServeChild(project.dir, args, env);
    const readyAt = Date.now();
    client.url = second.url;
    try {
      const entered = (log: WireEvent[], name: string) =>
        log.find((e) => e.type === 'state.changed' && e.data.state === name)?.at as number | undefined;
      // The slow session's stream ends when the session does, i.e. when its timer has fired (or at once with 204
      // if it already has).
      const stream = await within(readSse(`${second.url}/sessions/slow/stream`), 15_000, 'the slow timer to fire after the restart');
      expect(stream.complete).toBe(true);
      const slow = await client.log('slow');
      const quick = await client.log('quick');
      // The quick timer (300 ms) fell due while the server was down: it fired during recovery, before /readyz said ready.
      expect(readyAt - killedAt).toBeGreaterThan(300);
      expect(entered(quick, 'timed_out')).toBeGreaterThanOrEqual(killedAt);
      expect(entered(quick, 'timed_out')!).toBeLessThanOrEqual(readyAt + 200);
      // The slow one (8 s) fired 8 s after it was armed, whatever the downtime (not 8 s after the restart). The
      // restart itself is the gap that tells the two apart: it must be longer than the tolerance below.
      expect(readyAt - entered(slow, 'waiting')!).toBeGreaterThan(400);
      const waited = entered(slow, 'timed_out')! - entered(slow, 'waiting')!;
      expect(waited).toBeGreaterThanOrEqual(8_000);
      expect(waited).toBeLessThan(8_000 + 400);
      expect(readyAt - entered(slow, 'waiting')!).toBeLessThan(8_000);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 120_000);
});
