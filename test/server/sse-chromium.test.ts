import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../e2e/browser.ts';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { startTestServer } from './harness.ts';
import { startCuttingProxy } from './tcp-proxy.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A page on its own loopback origin (the app that embeds the stream), allowed by the server's corsOrigins. */
async function startPageServer(): Promise<{ origin: string; close(): void }> {
  const server: Server = createHttpServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>stream</title>');
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('runtime server: SSE resume in Chromium', () => {
  it("delivers every event exactly once and in order to the browser's EventSource across 30 cut connections", async () => {
    const page = await startPageServer();
    const server = await startTestServer([refusalMachine(gateTool().tool)], {
      corsOrigins: [page.origin],
      retryMs: 20,
      rateLimit: { client: false, session: false },
    });
    const seed = Date.now() % 1_000_000;
    let state = seed;
    const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    try {
      const { body } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
      const session = server.runtime.session(body.sessionId);
      for (let i = 0; i < 200; i++) await session.send({ type: 'PING' });
      // Past the response headers (~300 bytes): a cut inside them is a failed connection, which EventSource gives up on.
      const proxy = await startCuttingProxy(server.port, (n) => (n < 30 ? 400 + Math.floor(random() * 5000) : undefined));
      try {
        const tab = await browser.newPage();
        await tab.goto(page.origin);
        await tab.evaluate((url) => {
          const w = window as unknown as { received: Array<{ id: string; type: string }>; opens: number; source: EventSource };
          w.received = [];
          w.opens = 0;
          w.source = new EventSource(url);
          w.source.onopen = () => w.opens++;
          const record = (e: MessageEvent) => w.received.push({ id: e.lastEventId, type: e.type });
          for (const type of ['session.started', 'state.changed', 'transition.rejected', 'session.done'])
            w.source.addEventListener(type, record);
        }, `http://127.0.0.1:${proxy.port}/sessions/${body.sessionId}/stream`);
        for (let i = 0; i < 200; i++) {
          await session.send({ type: 'PING' });
          if (i % 40 === 0) await new Promise((r) => setTimeout(r, 10));
        }
        await session.send({ type: 'FINISH' });
        // The server's 204 after the last event makes EventSource stop for good (readyState CLOSED).
        await tab.waitForFunction(
          () => (window as unknown as { source: EventSource }).source.readyState === EventSource.CLOSED,
          undefined,
          { timeout: 25_000 },
        );
        const { received, opens } = await tab.evaluate(() => {
          const w = window as unknown as { received: Array<{ id: string; type: string }>; opens: number };
          return { received: w.received, opens: w.opens };
        });
        const stored = await session.events();
        expect(proxy.cuts.length, `seed ${seed}`).toBe(30);
        expect(opens, `seed ${seed}, cuts at ${proxy.cuts.join(',')}`).toBeGreaterThanOrEqual(31);
        expect(
          received.map((e) => Number(e.id)),
          `seed ${seed}`,
        ).toEqual(stored.map((e) => e.seq));
        expect(received.map((e) => e.type)).toEqual(stored.map((e) => e.type));
      } finally {
        await proxy.close();
      }
    } finally {
      await server.close();
      page.close();
    }
  }, 60_000);
});
