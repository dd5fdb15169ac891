import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { getRequestListener, serve } from '@hono/node-server';
import { createRuntime } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';

let close: (() => void) | undefined;
afterEach(() => {
  close?.();
  close = undefined;
});

function listening(server: Server): Promise<string> {
  return new Promise((resolve) => server.once('listening', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

describe('runtime server mounted in your own service', () => {
  it('runs under a path of a Hono app', async () => {
    const api = createServer(createRuntime({ machines: [refusalMachine(gateTool().tool)] }), { log: () => {} });
    const app = new Hono().get('/', (c) => c.text('my service')).route('/flowing', api);
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
    close = () => server.close();
    const url = await listening(server);
    expect(await (await fetch(url)).text()).toBe('my service');
    const created = await fetch(`${url}/flowing/sessions`, { method: 'POST', body: JSON.stringify({ machine: 'refusals' }) });
    expect(created.status).toBe(201);
    const { sessionId } = await created.json();
    expect((await (await fetch(`${url}/flowing/sessions/${sessionId}`)).json()).status).toBe('waiting');
  });

  it('runs behind a node:http handler through getRequestListener (the Express way), prefix stripped', async () => {
    const api = createServer(createRuntime({ machines: [refusalMachine(gateTool().tool)] }), {
      log: () => {},
      token: 'mounted-token-0123456789',
    });
    const listener = getRequestListener(api.fetch);
    const server = createHttpServer((req, res) => {
      // What Express's app.use('/flowing', ...) does before calling the handler.
      if (req.url?.startsWith('/flowing/')) {
        req.url = req.url.slice('/flowing'.length);
        return listener(req, res);
      }
      res.end('my service');
    }).listen(0, '127.0.0.1');
    close = () => server.close();
    const url = await listening(server);
    expect((await fetch(`${url}/flowing/machines`)).status).toBe(401);
    const ok = await fetch(`${url}/flowing/machines`, { headers: { authorization: 'Bearer mounted-token-0123456789' } });
    expect((await ok.json()).machines[0].id).toBe('refusals');
    expect((await fetch(`${url}/flowing/healthz`)).status).toBe(200);
  });
});
