import { afterEach, describe, expect, it } from 'vitest';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { abortableTool, startTestServer, type TestServer } from './harness.ts';
import { within } from '../helpers/wait.ts';
import { readSse } from './sse-client.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function sessionWithEvents(pings: number, options: Parameters<typeof startTestServer>[1] = {}, tool = gateTool().tool) {
  server = await startTestServer([refusalMachine(tool)], options);
  const { body } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
  const session = server.runtime.session(body.sessionId);
  for (let i = 0; i < pings; i++) await session.send({ type: 'PING' });
  return { server, id: body.sessionId as string, session };
}

describe('runtime server: GET /sessions/:id/stream', () => {
  it('sends every event with id = seq and event = type, a retry hint first, and ends when the session finishes', async () => {
    const { server: s, id, session } = await sessionWithEvents(2);
    const reading = readSse(`${s.url}/sessions/${id}/stream`);
    await session.send({ type: 'FINISH' });
    const read = await reading;
    expect(read.status).toBe(200);
    expect(read.complete).toBe(true);
    expect(read.retry).toBe(1000);
    expect(read.raw.startsWith('retry: 1000\n\n')).toBe(true);
    const stored = await session.events();
    expect(read.events.map((e) => [e.id, e.event])).toEqual(stored.map((e) => [String(e.seq), e.type]));
    expect(read.events.map((e) => JSON.parse(e.data))).toEqual(JSON.parse(JSON.stringify(stored)));
    expect(read.events.at(-1)!.event).toBe('session.done');
  });

  it('sends the stream headers proxies need and no compression', async () => {
    const { server: s, id } = await sessionWithEvents(0);
    const read = await readSse(`${s.url}/sessions/${id}/stream`, { until: (r) => r.events.length >= 1 });
    expect(read.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(read.headers.get('cache-control')).toBe('no-cache');
    expect(read.headers.get('x-accel-buffering')).toBe('no');
    expect(read.headers.get('content-encoding')).toBeNull();
  });

  it('resumes exactly after Last-Event-ID, which wins over ?after=', async () => {
    const { server: s, id, session } = await sessionWithEvents(4);
    await session.send({ type: 'FINISH' });
    const read = await readSse(`${s.url}/sessions/${id}/stream?after=1`, { headers: { 'last-event-id': '3' } });
    const stored = await session.events();
    expect(read.events.map((e) => Number(e.id))).toEqual(stored.filter((e) => e.seq > 3).map((e) => e.seq));
    const byQuery = await readSse(`${s.url}/sessions/${id}/stream?after=5`);
    expect(byQuery.events.map((e) => Number(e.id))).toEqual(stored.filter((e) => e.seq > 5).map((e) => e.seq));
  });

  it('answers 204 for a finished session read to its end', async () => {
    const { server: s, id, session } = await sessionWithEvents(1);
    await session.send({ type: 'FINISH' });
    const last = (await session.snapshot()).seq;
    const response = await fetch(`${s.url}/sessions/${id}/stream`, { headers: { 'last-event-id': String(last) } });
    expect(response.status).toBe(204);
  });

  it('refuses a malformed Last-Event-ID with 400 and one beyond the log with 409', async () => {
    const { server: s, id } = await sessionWithEvents(1);
    for (const bad of ['abc', '-1', '1.5', '1e3', '\u0000']) {
      const response = await fetch(`${s.url}/sessions/${id}/stream`, {
        headers: { 'last-event-id': encodeURIComponent(bad) === bad ? bad : 'x' },
      });
      expect(response.status, bad).toBe(400);
      expect((await response.json()).code).toBe('SERVER_BAD_EVENT_ID');
    }
    const beyond = await fetch(`${s.url}/sessions/${id}/stream`, { headers: { 'last-event-id': '999' } });
    expect(beyond.status).toBe(409);
    expect((await beyond.json()).code).toBe('SERVER_STALE_EVENT_ID');
  });

  it('sends `:` heartbeat comments on an idle stream, never with an id', async () => {
    const { server: s, id } = await sessionWithEvents(0, { heartbeatMs: 30 });
    const read = await readSse(`${s.url}/sessions/${id}/stream`, { until: (r) => r.comments.length >= 3 });
    expect(read.comments.length).toBeGreaterThanOrEqual(3);
    expect(read.raw).toMatch(/\n\n: keep-alive\n\n/);
    for (const frame of read.raw.split('\n\n').filter((f) => f.startsWith(':'))) expect(frame).not.toMatch(/^id:/m);
  });

  it('frames every event with digits-only ids and a blank line after each', async () => {
    const { server: s, id, session } = await sessionWithEvents(3);
    await session.send({ type: 'FINISH' });
    const read = await readSse(`${s.url}/sessions/${id}/stream`);
    expect(read.raw.endsWith('\n\n')).toBe(true);
    const ids = [...read.raw.matchAll(/^id: (.*)$/gm)].map((m) => m[1]!);
    expect(ids.every((value) => /^\d+$/.test(value))).toBe(true);
    expect(ids.length).toBe(read.events.length);
  });
});

describe('runtime server: POST /sessions/:id/events/stream', () => {
  it('streams the events an event causes, then its result, and ends', async () => {
    const { server: s, id } = await sessionWithEvents(1);
    const read = await readSse(`${s.url}/sessions/${id}/events/stream`, {
      method: 'POST',
      body: JSON.stringify({ type: 'FINISH' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(read.complete).toBe(true);
    expect(read.events.map((e) => e.event)).toEqual(['state.changed', 'session.done', 'result']);
    const stored = await s.runtime.session(id).events();
    expect(read.events.slice(0, 2).map((e) => Number(e.id))).toEqual(stored.slice(-2).map((e) => e.seq));
    expect(read.events[2]!.id).toBeUndefined();
    expect(JSON.parse(read.events[2]!.data)).toMatchObject({ applied: true, status: 'done' });
  });

  it('streams a refusal as its transition.rejected event and a result with the code', async () => {
    const { server: s, id } = await sessionWithEvents(0);
    const read = await readSse(`${s.url}/sessions/${id}/events/stream`, {
      method: 'POST',
      body: JSON.stringify({ type: 'GO', n: 0 }),
      headers: { 'content-type': 'application/json' },
    });
    expect(read.events.map((e) => e.event)).toEqual(['transition.rejected', 'result']);
    expect(JSON.parse(read.events[1]!.data)).toMatchObject({ applied: false, code: 'GUARD_REJECTED' });
  });

  it('ends with a coded result when the send itself fails (the store breaks mid-request)', async () => {
    const { server: s, id } = await sessionWithEvents(0);
    const load = s.store.load;
    let loads = 0;
    s.store.load = async (sessionId) => {
      if (++loads > 1) throw new Error('disk unplugged');
      return load(sessionId);
    };
    const read = await readSse(`${s.url}/sessions/${id}/events/stream`, {
      method: 'POST',
      body: JSON.stringify({ type: 'FINISH' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(read.complete).toBe(true);
    const result = read.events.at(-1)!;
    expect(result.event).toBe('result');
    expect(JSON.parse(result.data)).toMatchObject({ applied: false, code: 'SERVER_INTERNAL' });
    expect(read.raw).not.toContain('disk unplugged');
    expect(s.logs.some((e) => e.level === 'error' && e.message.includes('disk unplugged'))).toBe(true);
  });

  it('cancels the generation when the client leaves and stays away past the grace period', async () => {
    const wait = abortableTool();
    const { server: s, id } = await sessionWithEvents(0, { disconnectGraceMs: 150 }, wait.tool);
    await readSse(`${s.url}/sessions/${id}/events/stream`, {
      method: 'POST',
      body: JSON.stringify({ type: 'GO', n: 1 }),
      headers: { 'content-type': 'application/json' },
      until: (r) => r.events.some((e) => e.event === 'tool.started'),
    });
    const leftAt = performance.now();
    const abortedAt = await within(wait.aborted, 2_000, 'the call to be aborted after the grace period');
    expect(abortedAt - leftAt).toBeGreaterThanOrEqual(140);
    expect(abortedAt - leftAt).toBeLessThan(1000);
    const view = await s.call('GET', `/sessions/${id}`);
    expect(view.body.status).toBe('cancelled');
    expect(s.logs.some((e) => e.code === 'SERVER_CLIENT_GONE')).toBe(true);
  });

  it('does not cancel when the client comes back on the stream within the grace period', async () => {
    const GRACE_MS = 300;
    const HEARTBEAT_MS = 50;
    const wait = abortableTool();
    const { server: s, id } = await sessionWithEvents(0, { disconnectGraceMs: GRACE_MS, heartbeatMs: HEARTBEAT_MS }, wait.tool);
    const first = await readSse(`${s.url}/sessions/${id}/events/stream`, {
      method: 'POST',
      body: JSON.stringify({ type: 'GO', n: 1 }),
      headers: { 'content-type': 'application/json' },
      until: (r) => r.events.some((e) => e.event === 'tool.started'),
    });
    const lastId = first.events.filter((e) => e.id !== undefined).at(-1)!.id!;
    // The server's own heartbeats on the resumed stream say when the grace period is over: they come from a timer in
    // the same event loop as the grace timer, which was armed when the client left (before this stream opened), so
    // the heartbeat due twice the grace period after the open is written after that timer's deadline. Had the timer
    // cancelled, the log line, the abort and the cancelled status would all be there by then.
    let pastGrace!: () => void;
    const heartbeats = new Promise<void>((resolve) => (pastGrace = resolve));
    const back = readSse(`${s.url}/sessions/${id}/stream`, {
      headers: { 'last-event-id': lastId },
      until: (r) => {
        if (r.comments.length >= (2 * GRACE_MS) / HEARTBEAT_MS) pastGrace();
        return false;
      },
    });
    // (A stream that ends first, as a cancelled session's does, ends the wait too: the checks below say why.)
    await within(Promise.race([heartbeats, back]), 10_000, `${(2 * GRACE_MS) / HEARTBEAT_MS} heartbeats on the resumed stream`);
    expect(s.logs.filter((e) => e.code === 'SERVER_CLIENT_GONE')).toEqual([]);
    expect(wait.state.abortedAt).toBeUndefined();
    expect((await s.call('GET', `/sessions/${id}`)).body.status).toBe('running');
    await s.call('POST', `/sessions/${id}/cancel`, { body: {} });
    const rest = await back;
    expect(rest.complete).toBe(true);
    expect(rest.events.map((e) => e.event)).toContain('session.cancelled');
    const stored = await s.runtime.session(id).events();
    expect(rest.events.at(-1)!.id).toBe(String(stored.at(-1)!.seq));
  });
});
