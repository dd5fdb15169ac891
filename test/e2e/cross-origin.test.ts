import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';
import { launchChromium, openPage } from './browser.ts';

/**
 * RELIABILITY X3, in a real browser, against the server `flowing studio` runs: a page on another loopback origin can
 * neither read nor change the studio. The reads and the JSON PUT are also stopped by the browser itself (no CORS
 * headers, failed preflight); the simple requests below are not (a browser sends them without asking), so only the
 * studio's own Origin/Sec-Fetch-Site check keeps them from writing files.
 */
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

const sha = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

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
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ spec: {}, baseVersion: null, draft: true }),
        });
        out.put = response.status;
      } catch (error) {
        out.putError = String(error);
      }
      // "Simple" requests: sent without a preflight, so they reach the server; the page just cannot read the answers.
      const simple = (path: string, body: unknown) =>
        fetch(`${base}${path}`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(body) });
      await simple('api/tools', { name: 'planted_tool' });
      await simple('api/machines', { id: 'planted-machine' });
      out.simple = 'sent';
      // A form posting text/plain whose body happens to be JSON, into a frame (a cross-site navigation).
      await new Promise<void>((resolve) => {
        const frame = document.createElement('iframe');
        frame.name = 'sink';
        frame.addEventListener('load', () => resolve(), { once: true });
        document.body.append(frame);
        const form = document.createElement('form');
        Object.assign(form, { method: 'POST', action: `${base}api/machines`, enctype: 'text/plain', target: 'sink' });
        const field = document.createElement('input');
        Object.assign(field, { name: '{"id":"form-planted","x":"', value: '"}' });
        form.append(field);
        document.body.append(form);
        form.submit();
      });
      out.form = 'sent';
      return out;
    }, studio.url);

    expect(outcome.read).toBeUndefined();
    expect(String(outcome.readError)).toMatch(/Failed to fetch/);
    expect(outcome.put).toBeUndefined();
    expect(String(outcome.putError)).toMatch(/Failed to fetch/);
    expect(outcome.simple).toBe('sent');
    expect(outcome.form).toBe('sent');
    expect(await exists(join(studio.rootDir, 'tools/planted_tool.ts'))).toBe(false);
    expect(await exists(join(studio.rootDir, 'machines/planted-machine'))).toBe(false);
    expect(await exists(join(studio.rootDir, 'machines/form-planted'))).toBe(false);
    expect(await sha(specFile)).toBe(before);
  }, 60_000);
});
