import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { startServer, type ServerLogEntry } from '@flowing/runtime/server';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { rawRequest, startTestServer, storeDump, type TestServer } from './harness.ts';

const TOKEN = 'test-token-0123456789abcdef';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function withSession(options: Parameters<typeof startTestServer>[1] = {}) {
  server = await startTestServer([refusalMachine(gateTool().tool)], options);
  const auth: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const { body } = await server.call('POST', '/sessions', { body: { machine: 'refusals' }, headers: auth });
  return { server, id: body.sessionId as string, auth };
}

describe('runtime server: binding and bearer token', () => {
  it('listens on 127.0.0.1 by default', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    expect(server.host).toBe('127.0.0.1');
  });

  it('refuses to start on a non-loopback host without a token (SERVER_TOKEN_REQUIRED)', async () => {
    const runtime = createRuntime({ machines: [refusalMachine(gateTool().tool)] });
    await expect(startServer(runtime, { host: '0.0.0.0', port: 0, log: () => {} })).rejects.toMatchObject({
      code: 'SERVER_TOKEN_REQUIRED',
    });
  });

  it('starts on 0.0.0.0 with a token and answers 401 SERVER_UNAUTHORIZED without it', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)], { host: '0.0.0.0', token: TOKEN });
    const url = `http://127.0.0.1:${server.port}`;
    const missing = await fetch(`${url}/machines`);
    expect(missing.status).toBe(401);
    expect((await missing.json()).code).toBe('SERVER_UNAUTHORIZED');
    const ok = await fetch(`${url}/machines`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
  });

  it('answers 401 on every route, SSE included, for a missing, wrong or query-string token, and changes nothing', async () => {
    const { server: s, id } = await withSession({ token: TOKEN });
    const before = storeDump(s.store);
    const routes: Array<[string, string]> = [
      ['GET', '/machines'],
      ['GET', '/sessions'],
      ['POST', '/sessions'],
      ['GET', `/sessions/${id}`],
      ['GET', `/sessions/${id}/events`],
      ['POST', `/sessions/${id}/events`],
      ['GET', `/sessions/${id}/stream`],
      ['POST', `/sessions/${id}/events/stream`],
      ['POST', `/sessions/${id}/cancel`],
      ['POST', `/sessions/${id}/approve`],
      ['POST', `/sessions/${id}/reject`],
    ];
    const wrongHeaders: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token-0123456789abcdef' },
      { authorization: `Basic ${TOKEN}` },
      { authorization: `Bearer ${TOKEN}x` },
    ];
    for (const [method, path] of routes) {
      for (const headers of wrongHeaders) {
        const answer = await s.call(method, path, {
          headers,
          ...(method === 'POST' ? { body: { type: 'FINISH', machine: 'refusals' } } : {}),
        });
        expect(answer.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(answer.body.code).toBe('SERVER_UNAUTHORIZED');
      }
      const query = await s.call(method, `${path}?token=${TOKEN}&access_token=${TOKEN}`);
      expect(query.status).toBe(401);
    }
    expect(storeDump(s.store)).toBe(before);
  });

  it('never writes the token to the log, the events or the stored records', async () => {
    const { server: s, id, auth } = await withSession({ token: TOKEN });
    await s.call('POST', `/sessions/${id}/events`, { body: { type: 'PING', token: TOKEN }, headers: auth });
    await s.call('GET', '/machines', { headers: { authorization: `Bearer ${TOKEN}-wrong` } });
    // A failure whose message carries the token (a driver echoing a connection string) is logged redacted.
    s.runtime.store.load = async () => {
      throw new Error(`cannot connect with ${TOKEN}`);
    };
    expect((await s.call('GET', `/sessions/${id}`, { headers: auth })).status).toBe(500);
    expect(s.logs.some((e) => e.code === 'SERVER_INTERNAL' && e.message.includes('[redacted]'))).toBe(true);
    expect(JSON.stringify(s.logs)).not.toContain(TOKEN);
    expect(storeDump(s.store)).not.toContain(TOKEN);
  });
});

describe('runtime server: browsers and hosts', () => {
  it('refuses a foreign Origin with 403 SERVER_FORBIDDEN_ORIGIN and stores nothing', async () => {
    const { server: s, id } = await withSession();
    const before = storeDump(s.store);
    for (const [method, path] of [
      ['POST', '/sessions'],
      ['POST', `/sessions/${id}/events`],
      ['GET', `/sessions/${id}/stream`],
      ['POST', `/sessions/${id}/cancel`],
      ['GET', `/sessions/${id}`],
    ] as const) {
      const answer = await s.call(method, path, {
        headers: { origin: 'http://evil.example' },
        ...(method === 'POST' ? { body: { type: 'FINISH', machine: 'refusals' } } : {}),
      });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.code).toBe('SERVER_FORBIDDEN_ORIGIN');
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
    const crossSite = await s.call('POST', `/sessions/${id}/cancel`, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(storeDump(s.store)).toBe(before);
  });

  it('refuses a preflight from a foreign origin and answers one from a named origin with that origin only', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)], { corsOrigins: ['http://studio.test:5173'] });
    const preflight = (origin: string) =>
      fetch(`${server!.url}/sessions`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
    const foreign = await preflight('http://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const named = await preflight('http://studio.test:5173');
    expect(named.status).toBe(204);
    expect(named.headers.get('access-control-allow-origin')).toBe('http://studio.test:5173');
    const read = await server.call('GET', '/machines', { headers: { origin: 'http://studio.test:5173' } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBe('http://studio.test:5173');
  });

  it('without a token refuses a Host that is not loopback (DNS rebinding) with 403 SERVER_FORBIDDEN_HOST', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const evil = await rawRequest(server.url, { path: '/machines', headers: { host: `evil.example:${server.port}` } });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body).code).toBe('SERVER_FORBIDDEN_HOST');
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`]) {
      expect((await rawRequest(server.url, { path: '/machines', headers: { host } })).status).toBe(200);
    }
  });

  it('serves any loopback address without a token: started on 127.0.0.2, it answers requests to it', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)], { host: '127.0.0.2' });
    expect(server.host).toBe('127.0.0.2');
    const answer = await fetch(`${server.url}/machines`);
    expect(answer.status).toBe(200);
    for (const host of [`127.255.0.9:${server.port}`, `127.0.0.2`]) {
      expect((await rawRequest(server.url, { path: '/machines', headers: { host } })).status).toBe(200);
    }
    // Look-alikes of loopback are not loopback.
    for (const host of ['127.0.0.256', '127.0.0.1.evil.example', '128.0.0.1', '[::2]']) {
      expect((await rawRequest(server.url, { path: '/machines', headers: { host } })).status, host).toBe(403);
    }
  });
});

describe('runtime server: hostile bodies and ids', () => {
  it('refuses a body over the limit with 413, by Content-Length and chunked, and stores nothing', async () => {
    const { server: s, id } = await withSession({ maxBodyBytes: 1024 });
    const before = storeDump(s.store);
    const big = JSON.stringify({ type: 'GO', n: 1, pad: 'x'.repeat(5000) });
    const declared = await s.call('POST', `/sessions/${id}/events`, { raw: big, headers: { 'content-type': 'application/json' } });
    expect(declared.status).toBe(413);
    expect(declared.body.code).toBe('SERVER_BODY_TOO_LARGE');
    const chunked = await rawRequest(s.url, {
      method: 'POST',
      path: `/sessions/${id}/events`,
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      chunks: [big.slice(0, 800), big.slice(800, 1600), big.slice(1600)],
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).code).toBe('SERVER_BODY_TOO_LARGE');
    expect(storeDump(s.store)).toBe(before);
  });

  it('refuses 10,000-deep JSON with 400 SERVER_BAD_JSON before parsing, and malformed JSON too', async () => {
    const { server: s, id } = await withSession({ maxBodyBytes: 100_000 });
    const before = storeDump(s.store);
    const deep = `{"type":"GO","n":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const started = performance.now();
    const answer = await s.call('POST', `/sessions/${id}/events`, { raw: deep, headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('SERVER_BAD_JSON');
    expect(performance.now() - started).toBeLessThan(1000);
    const broken = await s.call('POST', `/sessions/${id}/events`, { raw: '{"type":', headers: { 'content-type': 'application/json' } });
    expect(broken.body.code).toBe('SERVER_BAD_JSON');
    expect(storeDump(s.store)).toBe(before);
  });

  it('answers 404 SESSION_NOT_FOUND for unknown session ids on every session route and creates nothing', async () => {
    const { server: s } = await withSession();
    const before = storeDump(s.store);
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/events'],
      ['GET', '/stream'],
      ['POST', '/events'],
      ['POST', '/events/stream'],
      ['POST', '/cancel'],
      ['POST', '/approve'],
      ['POST', '/reject'],
    ] as const) {
      const answer = await s.call(
        method,
        `/sessions/no-such-session${path}`,
        method === 'POST' ? { body: path.startsWith('/events') ? { type: 'GO', n: 1 } : {} } : {},
      );
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.code).toBe('SESSION_NOT_FOUND');
    }
    expect(storeDump(s.store)).toBe(before);
  });

  it('refuses path tricks in session ids with 400 SERVER_BAD_SESSION_ID (or no route) and changes nothing', async () => {
    const { server: s } = await withSession();
    const before = storeDump(s.store);
    for (const id of ['..%2F..%2Fetc', '%2e%2e', 'a.b', '%00', 'a%20b', 'x'.repeat(200), '%E2%80%A8', '__proto__%2F', 'a%5Cb']) {
      for (const [method, path] of [
        ['GET', ''],
        ['POST', '/events'],
        ['POST', '/cancel'],
        ['GET', '/stream'],
      ] as const) {
        const answer = await rawRequest(s.url, {
          method,
          path: `/sessions/${id}${path}`,
          headers: { 'content-type': 'application/json' },
          chunks: method === 'POST' ? ['{"type":"FINISH"}'] : [],
        });
        expect([400, 404], `${method} ${id}${path}: ${answer.body}`).toContain(answer.status);
        const code = JSON.parse(answer.body).code;
        expect(['SERVER_BAD_SESSION_ID', 'SERVER_NOT_FOUND', 'SESSION_NOT_FOUND']).toContain(code);
      }
    }
    const created = await s.call('POST', '/sessions', { body: { machine: 'refusals', sessionId: '../escape' } });
    expect(created.status).toBe(400);
    expect(storeDump(s.store)).toBe(before);
  });
});

describe('runtime server: rate limits and errors', () => {
  it('limits a client with 429 SERVER_RATE_LIMITED and Retry-After', async () => {
    let now = 1_000_000;
    server = await startTestServer([refusalMachine(gateTool().tool)], {
      rateLimit: { client: { perSecond: 1, burst: 3 }, session: false },
      now: () => now,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await server.call('GET', '/machines')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await server.call('GET', '/machines');
    expect(limited.body.code).toBe('SERVER_RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toBe('1');
    now += 1000;
    expect((await server.call('GET', '/machines')).status).toBe(200);
  });

  it('limits writes per session without limiting other sessions', async () => {
    const now = 1_000_000;
    const { server: s, id } = await withSession({ rateLimit: { client: false, session: { perSecond: 0.5, burst: 2 } }, now: () => now });
    const other = (await s.call('POST', '/sessions', { body: { machine: 'refusals' } })).body.sessionId;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await s.call('POST', `/sessions/${id}/events`, { body: { type: 'PING' } })).status);
    expect(statuses).toEqual([409, 409, 429]);
    const limited = await s.call('POST', `/sessions/${id}/events`, { body: { type: 'PING' } });
    expect(limited.headers.get('retry-after')).toBe('2');
    expect((await s.call('POST', `/sessions/${other}/events`, { body: { type: 'PING' } })).status).toBe(409);
  });

  it('answers an unexpected failure with 500 SERVER_INTERNAL and no stack or message, logging it with secrets redacted', async () => {
    const secret = 'sk-test-SECRET123';
    const store = createMemoryStore();
    const broken = {
      ...store,
      name: 'broken',
      load: async () => {
        throw new Error(`database exploded near ${secret}`);
      },
    };
    const runtime = createRuntime({ machines: [refusalMachine(gateTool().tool)], store: broken });
    const logs: ServerLogEntry[] = [];
    const previous = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = secret;
    try {
      const running = await startServer(runtime, { port: 0, log: (e) => logs.push(e) });
      try {
        const response = await fetch(`${running.url}/sessions/abc`);
        const text = await response.text();
        expect(response.status).toBe(500);
        expect(JSON.parse(text)).toEqual({ code: 'SERVER_INTERNAL', message: expect.any(String) });
        expect(text).not.toMatch(/exploded|at .*\.ts|\n\s+at /);
        const logged = logs.find((e) => e.code === 'SERVER_INTERNAL');
        expect(logged?.message).toContain('database exploded');
        expect(JSON.stringify(logs)).not.toContain(secret);
        expect(JSON.stringify(logs)).toContain('[redacted]');
      } finally {
        await running.close();
      }
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  });

  it('answers an unknown route with 404 SERVER_NOT_FOUND', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const answer = await server.call('GET', '/admin');
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('SERVER_NOT_FOUND');
  });
});
