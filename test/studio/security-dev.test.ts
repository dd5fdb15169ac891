// RELIABILITY X2 (DNS rebinding), X3 (foreign origins), X6 (bodies), X7 (Vite file serving) against the Vite dev server of
// `npm run dev:studio` (HMR, the same API mounted as a plugin). security.test.ts runs the same guarantees against `flowing studio`.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  rawHttp,
  REPO_DIR,
  requestText,
  sendRaw,
  startStudioServer,
  type RawResponse,
  type StudioTestServer,
} from '../helpers/studio-server.ts';
import { describeBodyLimits } from './body-limits.ts';

const SECRET = 'sk-test-SECRET123';
const PAGE_MARKER = 'studio-security-test-page';
let studio: StudioTestServer;
let appDir: string;
let port: number;
const seen: RawResponse[] = [];
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const specFile = () => join(studio.rootDir, 'machines', 'order-support', 'order-support.flow.json');

async function send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await sendRaw(port, method, path, headers, body);
  seen.push(response);
  return response;
}

beforeAll(async () => {
  // A scratch studio app folder holding secrets next to the page, so "not served" is tested against files that exist.
  appDir = await mkdtemp(join(tmpdir(), 'flowing-studio-app-'));
  await writeFile(join(appDir, 'index.html'), `<!doctype html><html><body>${PAGE_MARKER}</body></html>\n`);
  await writeFile(join(appDir, '.env'), `OPENAI_API_KEY=${SECRET}\n`);
  await writeFile(join(appDir, '.env.local'), `OPENAI_API_KEY=${SECRET}\n`);
  await writeFile(join(appDir, 'key.pem'), `-----BEGIN PRIVATE KEY-----\n${SECRET}\n-----END PRIVATE KEY-----\n`);
  await mkdir(join(appDir, '.git'));
  await writeFile(join(appDir, '.git', 'config'), `[remote "origin"]\n\turl = https://user:${SECRET}@example.com/x.git\n`);
  await mkdir(join(appDir, 'sub'));
  await writeFile(join(appDir, 'sub', '.env'), `TOKEN=${SECRET}\n`);
  studio = await startStudioServer({ appDir, dev: true });
  port = studio.port;
  await writeFile(join(studio.rootDir, '.env'), `OPENAI_API_KEY=${SECRET}\n`);
});

afterAll(async () => {
  await studio?.close();
  if (appDir) await rm(appDir, { recursive: true, force: true });
});

async function validSave() {
  const loaded = await send('GET', '/api/machines/order-support');
  return { spec: { ...loaded.json.spec, description: 'saved by the security test' }, baseVersion: loaded.json.version as string };
}

/** Every kind of route: the API (reads and writes) and Vite's own (page, client, transforms, /@fs/, node_modules). */
const ROUTES: Array<[string, string, unknown?]> = [
  ['GET', '/api/machines'],
  ['GET', '/api/machines/order-support'],
  ['PUT', '/api/machines/order-support', 'save'],
  ['POST', '/api/machines/order-support/generate'],
  ['GET', '/api/tools'],
  ['POST', '/api/tools', { name: 'rebound_tool' }],
  ['OPTIONS', '/api/machines/order-support'],
  ['GET', '/'],
  ['GET', '/index.html'],
  ['GET', '/@vite/client'],
  ['GET', `/@fs${REPO_DIR}spec/index.ts`],
  ['GET', '/node_modules/vite/package.json'],
];

describe('X2: DNS rebinding (Host header)', () => {
  const hosts = () => [
    `evil.example:${port}`,
    'evil.example',
    `127.0.0.1.evil.example:${port}`,
    `localhost.evil.example:${port}`,
    `127.0.0.1:${port + 1}`,
    `localhost:${port}0`,
    '',
  ];

  it('refuses every route with a foreign Host with 403, and changes nothing', async () => {
    const before = sha256(await readFile(specFile()));
    for (const [method, path, body] of ROUTES) {
      for (const host of hosts()) {
        const payload = body === 'save' ? await validSave() : body;
        const response = await send(method, path, { Host: host }, payload);
        expect(response.status, `${method} ${path} Host ${host}`).toBe(403);
        expect(response.body).not.toContain(PAGE_MARKER);
      }
    }
    const api = await send('GET', '/api/machines', { Host: `evil.example:${port}` });
    expect(api.json.code).toBe('STUDIO_FORBIDDEN_HOST');
    expect(sha256(await readFile(specFile()))).toBe(before);
    expect(existsSync(join(studio.rootDir, 'tools', 'rebound_tool.ts'))).toBe(false);
  });

  it('refuses the HMR WebSocket upgrade with a foreign Host or Origin, and accepts its own', async () => {
    const upgrade = (headers: Record<string, string>) =>
      rawHttp(
        port,
        requestText(port, 'GET', '/', {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Protocol': 'vite-hmr',
          ...headers,
        }),
        { headOnly: true },
      );
    expect((await upgrade({ Host: `evil.example:${port}` })).status).toBe(403);
    expect((await upgrade({ Origin: 'http://evil.example' })).status).toBe(403);
    expect((await upgrade({})).status).toBe(101);
  });

  it.each(['localhost', '127.0.0.1', '[::1]'])('accepts Host %s with the studio port', async (name) => {
    const api = await send('GET', '/api/machines', { Host: `${name}:${port}` });
    expect(api.status).toBe(200);
    const page = await send('GET', '/', { Host: `${name}:${port}` });
    expect(page.status).toBe(200);
    expect(page.body).toContain(PAGE_MARKER);
  });
});

describe('X3: foreign origins', () => {
  const origins = () => [
    'http://evil.example',
    `http://127.0.0.1:${port + 1}`,
    `http://localhost:${port + 1}`,
    'null',
    `https://127.0.0.1:${port}`,
    `http://127.0.0.1:${port}.evil.example`,
  ];
  const WRITES = ROUTES.filter(([method]) => method !== 'GET');

  it('refuses every non-GET route (and the API reads) from a foreign Origin with 403 STUDIO_FORBIDDEN_ORIGIN', async () => {
    const before = sha256(await readFile(specFile()));
    for (const [method, path, body] of [
      ...WRITES,
      ['GET', '/api/machines'],
      ['GET', '/api/machines/order-support'],
      ['GET', '/api/tools'],
    ] as typeof ROUTES) {
      for (const origin of origins()) {
        const payload = body === 'save' ? await validSave() : body;
        const response = await send(method, path, { Origin: origin, 'Access-Control-Request-Method': 'PUT' }, payload);
        expect(response.status, `${method} ${path} Origin ${origin}`).toBe(403);
        expect(response.json?.code).toBe('STUDIO_FORBIDDEN_ORIGIN');
      }
    }
    expect(sha256(await readFile(specFile()))).toBe(before);
    expect(existsSync(join(studio.rootDir, 'tools', 'rebound_tool.ts'))).toBe(false);
  });

  it('refuses every non-GET route with Sec-Fetch-Site cross-site or same-site (no Origin) with 403', async () => {
    for (const [method, path, body] of WRITES) {
      for (const site of ['cross-site', 'same-site']) {
        const payload = body === 'save' ? await validSave() : body;
        const response = await send(method, path, { 'Sec-Fetch-Site': site }, payload);
        expect(response.status, `${method} ${path} ${site}`).toBe(403);
        expect(response.json?.code).toBe('STUDIO_FORBIDDEN_ORIGIN');
      }
    }
  });

  it('refuses cross-site subresource reads of Vite routes but lets a link open the page', async () => {
    const script = await send('GET', '/@vite/client', {
      'Sec-Fetch-Site': 'cross-site',
      'Sec-Fetch-Mode': 'no-cors',
      'Sec-Fetch-Dest': 'script',
    });
    expect(script.status).toBe(403);
    const page = await send('GET', '/', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' });
    expect(page.status).toBe(200);
  });

  it("accepts a save from the studio's own origin", async () => {
    const response = await send(
      'PUT',
      '/api/machines/order-support',
      { Origin: `http://127.0.0.1:${port}`, 'Sec-Fetch-Site': 'same-origin' },
      await validSave(),
    );
    expect(response.status).toBe(200);
    const own = await send('GET', '/api/tools', { Origin: `http://localhost:${port}` });
    expect(own.status).toBe(200);
  });

  it('never sends Access-Control-Allow-Origin: * (nor any allow-origin) in any response of this file', () => {
    expect(seen.length).toBeGreaterThan(100);
    for (const response of seen) expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describeBodyLimits({ port: () => port, send });

describe('X7: Vite does not serve secrets or files outside the studio', () => {
  const paths = () => [
    '/.env',
    '/.env?raw',
    '/.env?import&raw',
    '/.env?raw??',
    '/.env?import&raw??',
    '/.env?url',
    '/.env?inline',
    '/.env.local',
    '/.env.local?raw',
    '/%2eenv',
    '/.env%3Fraw',
    '/sub/.env?raw',
    '/.git/config',
    '/.git/config?raw',
    '/key.pem',
    '/key.pem?raw',
    '/key.pem?import&raw',
    `/@fs${appDir}/.env`,
    `/@fs${appDir}/.env?import&raw`,
    `/@fs${appDir}/.env?raw??`,
    `/@fs${appDir}/.git/config?raw`,
    `/@fs${appDir}/key.pem?import&raw`,
    `/@fs${studio.rootDir}/.env?import&raw`,
    `/@fs${studio.rootDir}/machines/order-support/order-support.flow.json?raw`,
    `/@fs${REPO_DIR}package.json?raw`,
    '/@fs/etc/passwd?raw',
    '/@fs/etc/passwd?import&raw??',
    '/..%2f.env',
    '/%2e%2e/%2e%2e/etc/passwd',
  ];

  it('answers no 200 with file content (at most the SPA page) for dotenv, .git, key files and paths outside the allow list', async () => {
    for (const path of paths()) {
      const response = await send('GET', path);
      // A path naming no file (e.g. `/.env%3Fraw`, the file ".env?raw") may get the studio page from the SPA fallback.
      if (response.status === 200) expect(response.body, path).toContain(PAGE_MARKER);
      expect(response.body, path).not.toContain(SECRET);
      expect(response.body, path).not.toContain('root:x:0:0');
    }
  });

  it('still serves the studio page and the allowed spec/ sources (the refusals above are not vacuous)', async () => {
    const page = await send('GET', '/index.html');
    expect(page.status).toBe(200);
    expect(page.body).toContain(PAGE_MARKER);
    const spec = await send('GET', `/@fs${REPO_DIR}spec/format.ts`);
    expect(spec.status).toBe(200);
    expect(spec.body).toContain('formatSpec');
  });

  it('runs a vite release with the fixes for GHSA-p9ff-h696-f583 and GHSA-4w7w-66w2-5vf9 (6.4.2, 7.3.2, 8.0.5)', async () => {
    const { stdout } = await promisify(execFile)('npm', ['ls', 'vite', '--all', '--json'], { cwd: REPO_DIR });
    const versions = new Set<string>();
    const collect = (node: { dependencies?: Record<string, { version?: string; dependencies?: unknown }> }): void => {
      for (const [name, child] of Object.entries(node.dependencies ?? {})) {
        if (name === 'vite' && child.version) versions.add(child.version);
        collect(child as never);
      }
    };
    collect(JSON.parse(stdout));
    expect(versions.size).toBeGreaterThan(0);
    const fixed: Record<number, [number, number]> = { 6: [4, 2], 7: [3, 2], 8: [0, 5] };
    for (const version of versions) {
      const [major, minor, patch] = version.split('.').map((n) => Number.parseInt(n, 10)) as [number, number, number];
      if (major < 9) {
        const floor = fixed[major];
        expect(floor, `vite ${version} is older than every fixed line`).toBeDefined();
        expect(minor > floor![0] || (minor === floor![0] && patch >= floor![1]), `vite ${version}`).toBe(true);
      }
    }
  });
});
