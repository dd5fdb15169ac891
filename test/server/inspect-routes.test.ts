import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, parseSessionFile, type AnyMachineDefinition, type Runtime } from '@flowing/runtime';
import { startServer, type RunningServer } from '@flowing/runtime/server';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { countingTools } from '../helpers/runtime-counting.ts';

const TOKEN = 'inspect-token-0123456789abcdef';
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

interface Served {
  server: RunningServer;
  runtime: Runtime;
  store: SqliteStore;
  counts: Record<string, number>;
  parentId: string;
  call(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
}

/** `flowing serve` as a user runs it: SQLite store, HTTP on 127.0.0.1, a bearer token; one refund session waiting for approval. */
async function serve(): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-inspect-routes-'));
  const store = createSqliteStore({ file: join(dir, 'sessions.db') });
  const { tools, counts } = countingTools(orderSupport.tools);
  const machine = { ...orderSupport, tools } as AnyMachineDefinition;
  const runtime = createRuntime({ machines: [machine], store });
  const server = await startServer(runtime, { port: 0, token: TOKEN, log: () => {} });
  cleanup.push(async () => {
    await server.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const call: Served['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(server.url + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (the export): keep the text
    }
    return { status: response.status, headers: response.headers, body, text };
  };
  const created = await call('POST', '/sessions', {
    body: { machine: 'order-support', input: { userId: 'u-ada' }, sessionId: 'parent-http' },
  });
  expect(created.status).toBe(201);
  expect((await call('POST', '/sessions/parent-http/events', { body: { type: 'USER_MESSAGE', text: 'refund A1002 please' } })).status).toBe(
    200,
  );
  for (const name of Object.keys(counts)) counts[name] = 0;
  return { server, runtime, store, counts, parentId: 'parent-http', call };
}

const noCalls = (counts: Record<string, number>) => expect(Object.values(counts).every((n) => n === 0)).toBe(true);

describe('GET /sessions/:id/at/:seq', () => {
  it('answers the state, context, pending calls and approval at each event, calling nothing', async () => {
    const s = await serve();
    const log = (await s.call('GET', `/sessions/${s.parentId}/events`)).body.events as Array<{ seq: number; type: string; data: any }>;
    const started = log.find((e) => e.type === 'tool.started')!;
    const atCall = await s.call('GET', `/sessions/${s.parentId}/at/${started.seq}`);
    expect(atCall.status).toBe(200);
    expect(atCall.body).toMatchObject({
      sessionId: s.parentId,
      machineId: 'order-support',
      seq: started.seq,
      lastSeq: log.length,
      status: 'running',
      pendingCalls: [{ callId: started.data.callId, kind: 'tool', name: started.data.tool, args: started.data.args }],
      event: { seq: started.seq, type: 'tool.started' },
    });
    const last = await s.call('GET', `/sessions/${s.parentId}/at/${log.length}`);
    expect(last.body).toMatchObject({
      state: { active: 'await_approval' },
      activeStates: ['active.await_approval'],
      status: 'waiting',
      approval: { tool: 'issue_refund', args: { order_id: 'A1002', amount: 120 } },
    });
    expect((await s.call('GET', `/sessions/${s.parentId}/at/0`)).body).toMatchObject({ seq: 0, state: null, event: null });
    noCalls(s.counts);
  });

  it('answers 404 for an unknown session or a seq past the end, 400 for a seq that is not a number', async () => {
    const s = await serve();
    const lastSeq = (await s.call('GET', `/sessions/${s.parentId}`)).body.seq;
    expect(await s.call('GET', '/sessions/nope/at/1')).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });
    expect(await s.call('GET', `/sessions/${s.parentId}/at/${lastSeq + 1}`)).toMatchObject({
      status: 404,
      body: { code: 'INSPECT_SEQ_OUT_OF_RANGE', details: { seq: lastSeq + 1, lastSeq } },
    });
    for (const bad of ['abc', '-1', '1.5', '9999999999999999']) {
      expect(await s.call('GET', `/sessions/${s.parentId}/at/${bad}`)).toMatchObject({ status: 400, body: { code: 'SERVER_BAD_REQUEST' } });
    }
  });
});

describe('GET /sessions/:id/export', () => {
  it('downloads the session as a JSON-lines attachment that parses back to the same log', async () => {
    const s = await serve();
    const response = await s.call('GET', `/sessions/${s.parentId}/export`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="order-support-parent-http.flowing.jsonl"');
    const file = parseSessionFile(response.text);
    expect(file.header).toMatchObject({
      kind: 'flowing.session',
      machineId: 'order-support',
      sessionId: s.parentId,
      specHash: orderSupport.specHash,
    });
    expect(file.events).toEqual(await s.store.readEvents(s.parentId, 0));
    expect(await s.call('GET', '/sessions/nope/export')).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });
    noCalls(s.counts);
  });
});

describe('POST /sessions/:id/fork', () => {
  it("forks at the approval wait with an edited total: 201, the link, the new approval; the parent's tools do not run", async () => {
    const s = await serve();
    const log = (await s.call('GET', `/sessions/${s.parentId}/events`)).body.events as Array<{ seq: number; type: string }>;
    const atSeq = log.find((e) => e.type === 'approval.requested')!.seq;
    const forked = await s.call('POST', `/sessions/${s.parentId}/fork`, {
      body: { atSeq, context: { order: { order_id: 'A1002', status: 'processing', total: 15 } }, sessionId: 'fork-http' },
    });
    expect(forked.status).toBe(201);
    expect(forked.headers.get('location')).toBe('/sessions/fork-http');
    expect(forked.body).toMatchObject({
      sessionId: 'fork-http',
      parentId: s.parentId,
      forkedAt: atSeq,
      status: 'waiting',
      pendingApproval: { tool: 'issue_refund', args: { amount: 15 } },
    });
    noCalls(s.counts);
    // The link stays on the session: GET answers it too (and null for a session that was not forked).
    expect((await s.call('GET', '/sessions/fork-http')).body).toMatchObject({ parentId: s.parentId, forkedAt: atSeq });
    expect((await s.call('GET', `/sessions/${s.parentId}`)).body).toMatchObject({ parentId: null, forkedAt: null });
    expect((await s.call('POST', '/sessions/fork-http/approve', { body: {} })).status).toBe(200);
    expect(s.counts).toMatchObject({ issue_refund: 1, resolve_user: 0, query_order: 0 });
    expect((await s.call('GET', `/sessions/${s.parentId}`)).body).toMatchObject({
      status: 'waiting',
      pendingApproval: { args: { amount: 120 } },
    });
  });

  it('answers coded 4xx for a bad patch, a call in flight, an unknown session, a bad body and a taken id', async () => {
    const s = await serve();
    const log = (await s.call('GET', `/sessions/${s.parentId}/events`)).body.events as Array<{ seq: number; type: string }>;
    const waitSeq = log.find((e) => e.type === 'approval.requested')!.seq;
    const inFlight = log.find((e) => e.type === 'tool.started')!.seq;
    const fork = (body: unknown, id = s.parentId) => s.call('POST', `/sessions/${id}/fork`, { body });
    expect(await fork({ atSeq: waitSeq, context: { userId: 42 } })).toMatchObject({
      status: 422,
      body: { code: 'FORK_CONTEXT_INVALID', details: { issues: [{ path: ['userId'] }] } },
    });
    expect(await fork({ atSeq: inFlight })).toMatchObject({ status: 409, body: { code: 'FORK_MID_CALL' } });
    expect(await fork({ atSeq: log.length + 5 })).toMatchObject({ status: 404, body: { code: 'INSPECT_SEQ_OUT_OF_RANGE' } });
    expect(await fork({ atSeq: 2 }, 'nope')).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });
    expect(await fork({ atSeq: '3' })).toMatchObject({ status: 400, body: { code: 'SERVER_BAD_REQUEST' } });
    expect(await fork({ atSeq: 3, extra: true })).toMatchObject({ status: 400, body: { code: 'SERVER_BAD_REQUEST' } });
    expect(await fork({ atSeq: waitSeq, sessionId: s.parentId })).toMatchObject({ status: 409, body: { code: 'SESSION_EXISTS' } });
    expect((await s.store.listSessions()).sessions).toHaveLength(1);
    noCalls(s.counts);
  });
});

describe('inspection routes behind the server guard', () => {
  it('answers 401 without the token and 403 to a foreign origin, on every inspection route', async () => {
    const s = await serve();
    const routes: Array<[string, string, unknown?]> = [
      ['GET', `/sessions/${s.parentId}/at/1`],
      ['GET', `/sessions/${s.parentId}/export`],
      ['POST', `/sessions/${s.parentId}/fork`, { atSeq: 2 }],
    ];
    for (const [method, path, body] of routes) {
      const bare = await fetch(s.server.url + path, {
        method,
        ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
      });
      expect(bare.status).toBe(401);
      expect((await s.call(method, path, { ...(body ? { body } : {}), headers: { origin: 'http://evil.example' } })).status).toBe(403);
    }
    expect((await s.store.listSessions()).sessions).toHaveLength(1);
  });
});
