// Starting the server `flowing studio` runs: the built app and its API, or a coded refusal to start.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startStudio } from '@flowing/studio/server';
import { REPO_DIR, sendRaw, startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';

let studio: StudioTestServer;
beforeAll(async () => {
  studio = await startStudioServer();
});
afterAll(async () => {
  await studio?.close();
});

describe('the built studio app', () => {
  it('serves the page built from the current sources and every script and style it references', async () => {
    const page = await sendRaw(studio.port, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.body).toContain('<div id="root"></div>');
    const assets = [...page.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    let scripts = '';
    for (const asset of assets) {
      const response = await sendRaw(studio.port, 'GET', asset);
      if (asset.endsWith('.js')) scripts += response.body;
      expect(response.status, asset).toBe(200);
      expect(response.headers['content-type'], asset).toMatch(/^(text\/javascript|text\/css)/);
      expect(response.headers['cache-control'], asset).toContain('immutable');
    }
    // Built from today's sources: the "New machine" dialog's label is in the bundle.
    expect(scripts).toContain('Machine id');
  });

  it('answers an unknown file with 404 STUDIO_NOT_FOUND (no page fallback) and a write to a page path with 405', async () => {
    const missing = await sendRaw(studio.port, 'GET', '/no-such-file.js');
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('STUDIO_NOT_FOUND');
    const post = await sendRaw(studio.port, 'POST', '/index.html', {}, {});
    expect(post.status).toBe(405);
    expect(post.json.code).toBe('STUDIO_METHOD_NOT_ALLOWED');
  });
});

describe('starting the studio server', () => {
  it('refuses to start without a built app with STUDIO_APP_MISSING', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'flowing-no-app-'));
    try {
      await expect(startStudio({ rootDir: REPO_DIR, appDir: empty, port: 0 })).rejects.toMatchObject({ code: 'STUDIO_APP_MISSING' });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('refuses a port that is taken with STUDIO_PORT_IN_USE', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      await expect(startStudio({ rootDir: REPO_DIR, appDir: inject('studioAppDir'), port, host: '127.0.0.1' })).rejects.toMatchObject({
        code: 'STUDIO_PORT_IN_USE',
        details: { port },
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('listens on loopback only by default', async () => {
    const server = await startStudio({ rootDir: REPO_DIR, appDir: inject('studioAppDir'), port: 0 });
    try {
      expect((server.server.address() as AddressInfo).address).toBe('127.0.0.1');
      expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
    } finally {
      await server.close();
    }
  });
});
