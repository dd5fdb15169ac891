// The runtime server serves the routes @flowing/protocol describes, at the paths a client builds from them.
import { describe, expect, it } from 'vitest';
import { routeUrl, RUNTIME_ROUTES, type RouteKey } from '@flowing/protocol';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';

const app = () => createServer(createRuntime({ machines: [orderSupport], store: createMemoryStore() }), { log: () => {} });

/** A request to a route for a session that does not exist (so nothing runs), as a client builds it. */
function requestFor(key: RouteKey): [string, RequestInit] {
  const url = `http://127.0.0.1${routeUrl(key, { id: 'no-such-session', seq: 0 } as never)}`;
  const method = key.slice(0, key.indexOf(' '));
  return [
    url,
    { method, headers: { host: '127.0.0.1', 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) },
  ];
}

describe('the runtime server and RuntimeRoutes', () => {
  it('serves every route the protocol lists: none answers SERVER_NOT_FOUND', async () => {
    const server = app();
    const unserved: string[] = [];
    for (const key of Object.keys(RUNTIME_ROUTES) as RouteKey[]) {
      const response = await server.request(...requestFor(key));
      const body = await response.text();
      if (body.includes('SERVER_NOT_FOUND')) unserved.push(key);
    }
    expect(unserved).toEqual([]);
    // The same requests on a path the protocol does not list are SERVER_NOT_FOUND.
    const stray = await server.request('http://127.0.0.1/sessions/no-such-session/nothing-here', { headers: { host: '127.0.0.1' } });
    expect(stray.status).toBe(404);
    expect(await stray.json()).toMatchObject({ code: 'SERVER_NOT_FOUND' });
  });

  it('builds route URLs with encoded path segments and comma-joined list queries', () => {
    expect(routeUrl('GET /sessions/:id/at/:seq', { id: 'a b/c', seq: 3 })).toBe('/sessions/a%20b%2Fc/at/3');
    expect(routeUrl('GET /sessions', undefined, { status: ['running', 'waiting'], limit: 10, machine: undefined })).toBe(
      '/sessions?status=running%2Cwaiting&limit=10',
    );
    expect(routeUrl('GET /machines')).toBe('/machines');
  });

  it('answers a listing filtered by a comma-joined status query the way the client sends it', async () => {
    const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
    const server = createServer(runtime, { log: () => {} });
    const listed = await server.request(`http://127.0.0.1${routeUrl('GET /sessions', undefined, { status: ['waiting', 'running'] })}`, {
      headers: { host: '127.0.0.1' },
    });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId)).toEqual([session.id]);
  });
});
