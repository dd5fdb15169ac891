import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';
import { launchChromium, openPage } from './browser.ts';

/** RELIABILITY X3, in a real browser: a page on another loopback origin can neither read nor change the studio. */
let browser: Browser;
let studio: StudioTestServer;
let other: Server;
let otherUrl: string;

beforeAll(async () => {
  browser = await launchChromium();
  studio = await startStudioServer();
  other = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>another site</title><p>another site</p>');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await browser?.close();
  await studio?.close();
  await new Promise((resolve) => other?.close(resolve));
});

const sha = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

describe('the studio API seen from a page on another origin', () => {
  it('cannot be read, written or made to create files by a foreign page', async () => {
    const specFile = join(studio.rootDir, 'machines/order-support/order-support.flow.json');
    const before = await sha(specFile);
    const { page } = await openPage(browser);
    await page.goto(otherUrl);
    const outcome = await page.evaluate(async (base: string) => {
      const out: Record<string, string | number> = {};
      try {
        const response = await fetch(`${base}api/machines`);
        out.read = await response.text();
      } catch (error) {
        out.readError = String(error);
      }
      try {
        const response = await fetch(`${base}api/machines/order-support`, {
          method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ spec: {}, baseVersion: null, draft: true }),
        });
        out.put = response.status;
      } catch (error) {
        out.putError = String(error);
      }
      try {
        // A "simple" request the browser sends without a preflight; the page cannot read the answer.
        await fetch(`${base}api/tools`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ name: 'planted_tool' }) });
        out.simple = 'sent';
      } catch (error) {
        out.simpleError = String(error);
      }
      return out;
    }, studio.url);

    expect(outcome.read).toBeUndefined();
    expect(String(outcome.readError)).toMatch(/Failed to fetch/);
    expect(outcome.put).toBeUndefined();
    expect(String(outcome.putError)).toMatch(/Failed to fetch/);
    expect(await access(join(studio.rootDir, 'tools/planted_tool.ts')).then(() => true, () => false)).toBe(false);
    expect(await sha(specFile)).toBe(before);
  }, 60_000);
});
