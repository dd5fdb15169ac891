import { assign, setup } from 'xstate';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryStore, createRuntime, defineMachine, type SessionStore } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { defineTestMachine } from '../helpers/runtime-machines.ts';
import { startTestServer, type TestServer } from './harness.ts';
import { pausedStream } from './paused-client.ts';
import { readSse } from './sse-client.ts';

/** idle --NOTE{text}--> idle, keeping the text: each NOTE logs a state.changed carrying it, so events are as big as the text. */
function noteMachine() {
  const machine = setup({
    types: {} as { context: { text: string }; events: { type: 'NOTE'; text: string } },
  }).createMachine({
    id: 'notes',
    context: { text: '' },
    initial: 'idle',
    states: { idle: { on: { NOTE: { target: '#notes.idle', reenter: true, actions: assign({ text: ({ event }) => event.text }) } } } },
  });
  const spec = {
    specVersion: 1,
    id: 'notes',
    context: { text: { type: 'string', default: '' } },
    events: { NOTE: { text: { type: 'string' } } },
    initial: 'idle',
    states: { idle: { on: { NOTE: { target: 'idle', assign: { text: 'event.text' } } } } },
  } as const;
  return defineMachine({ ...defineTestMachine(spec, machine, []), machine });
}

const NOTE_BYTES = 48 * 1024;
/** Far more than the kernel buffers of a loopback connection (about 4 MB here) and the lag bound together. */
const NOTES = 160;
const LAG = { bytes: 256 * 1024, events: 1000, closeAfterMs: 60_000 };

/** A note of NOTE_BYTES whose text names its number, so every event differs. */
const note = (i: number) => ({ type: 'NOTE', text: `${i}:`.padEnd(NOTE_BYTES, 'x') });

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('runtime server: a client that stops reading its stream', () => {
  it('is cut off with SSE_CLIENT_TOO_SLOW once live events past maxStreamLag wait for it, and resumes with every event once', async () => {
    server = await startTestServer([noteMachine()], { maxStreamLag: LAG });
    const { body } = await server.call('POST', '/sessions', { body: { machine: 'notes' } });
    const id = body.sessionId as string;
    const session = server.runtime.session(id);
    const paused = await pausedStream(`${server.url}/sessions/${id}/stream`);

    for (let i = 1; i <= NOTES; i++) {
      const result = await session.send(note(i));
      expect(result.applied).toBe(true);
    }
    const cut = await vi.waitFor(
      () => {
        const entry = server!.logs.find((e) => e.code === 'SSE_CLIENT_TOO_SLOW');
        if (!entry) throw new Error('no SSE_CLIENT_TOO_SLOW log line yet');
        return entry;
      },
      { timeout: 10_000, interval: 20 },
    );
    // What waited for the client when it was cut off: at most the bound and the one event that went past it.
    const lag = cut.lag as { events: number; bytes: number };
    expect(lag.bytes).toBeLessThanOrEqual(LAG.bytes + NOTE_BYTES + 1024);
    expect(lag.bytes).toBeGreaterThan(LAG.bytes);
    expect(cut.sessionId).toBe(id);

    // The session is unaffected: every note applied and it still takes events.
    const all = await session.events();
    expect((await session.send(note(NOTES + 1))).applied).toBe(true);
    const lastSeq = (await session.snapshot()).seq;
    expect(lastSeq).toBeGreaterThan(all.at(-1)!.seq);

    const first = await paused.resume();
    const error = first.events.at(-1)!;
    expect(error.event).toBe('error');
    expect(error.id).toBeUndefined();
    const data = JSON.parse(error.data);
    expect(data.code).toBe('SSE_CLIENT_TOO_SLOW');
    const received = first.events.filter((e) => e.id !== undefined);
    expect(data.seq).toBe(Number(received.at(-1)!.id));
    // The connection carried what the kernel buffers held and the bounded queue, far from the whole log.
    const logBytes = all.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    expect(first.bytes).toBeLessThan(logBytes / 2);

    const second = await readSse(`${server.url}/sessions/${id}/stream`, {
      headers: { 'last-event-id': received.at(-1)!.id! },
      until: (read) => read.events.some((e) => Number(e.id) === lastSeq),
    });
    const seqs = [...received, ...second.events].map((e) => Number(e.id));
    expect(seqs).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
    expect(second.events.some((e) => e.event === 'error')).toBe(false);
  }, 60_000);

  it('reads stored events at the pace of a paused client: one page in memory, and no cut-off however long the log', async () => {
    const memory = createMemoryStore();
    const reads: number[] = [];
    let loads = 0;
    const store: SessionStore = Object.assign(Object.create(memory) as SessionStore, {
      readEvents: (sessionId: string, afterSeq?: number, limit?: number) => {
        reads.push(afterSeq ?? 0);
        return memory.readEvents(sessionId, afterSeq, limit);
      },
      load: (sessionId: string) => {
        loads++;
        return memory.load(sessionId);
      },
    });
    server = await startTestServer([noteMachine()], { maxStreamLag: LAG, heartbeatMs: 50, runtime: { store } });
    const { body } = await server.call('POST', '/sessions', { body: { machine: 'notes' } });
    const id = body.sessionId as string;
    const session = server.runtime.session(id);
    // More than a page (500 events) and far more than the kernel buffers.
    for (let i = 1; i <= 520; i++) await session.send(note(i));
    const lastSeq = (await session.snapshot()).seq;

    reads.length = 0;
    const paused = await pausedStream(`${server.url}/sessions/${id}/stream`);
    // Each heartbeat looks the session up in the store: a few of them pass while the client reads nothing.
    const loadsAtStart = loads;
    await vi.waitFor(() => expect(loads, 'four heartbeats').toBeGreaterThanOrEqual(loadsAtStart + 4), { timeout: 10_000, interval: 20 });
    expect(reads).toEqual([0]);
    expect(server.logs.filter((e) => e.code === 'SSE_CLIENT_TOO_SLOW')).toEqual([]);

    paused.response.destroy();
    const read = await readSse(`${server.url}/sessions/${id}/stream`, {
      until: (r) => r.events.some((e) => Number(e.id) === lastSeq),
    });
    expect(read.events.map((e) => Number(e.id))).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
  }, 60_000);

  it('refuses a maxStreamLag that is not whole numbers of at least 1 with SERVER_BAD_MAX_STREAM_LAG naming the field', () => {
    const runtime = createRuntime({ machines: [noteMachine()] });
    for (const [maxStreamLag, field] of [
      [{ bytes: 0 }, 'bytes'],
      [{ events: 1.5 }, 'events'],
      [{ closeAfterMs: -1 }, 'closeAfterMs'],
    ] as const) {
      let thrown: unknown;
      try {
        createServer(runtime, { maxStreamLag });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'SERVER_BAD_MAX_STREAM_LAG', message: expect.stringContaining(`maxStreamLag.${field}`) });
    }
  });
});
