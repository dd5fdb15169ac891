// RELIABILITY X2 (DNS rebinding), X3 (foreign origins), X6 (bodies), X7 (only the built files are served) against the
// server `flowing studio` runs. security-dev.test.ts holds the same guarantees for the Vite dev server of `npm run dev:studio`.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawHttp, requestText, sendRaw, startStudioServer, type RawResponse, type StudioTestServer } from '../helpers/studio-server.ts';
import { describeBodyLimits } from './body-limits.ts';

const SECRET = 'sk-test-SECRET123';
const PAGE_MARKER = 'studio-security-test-page';
let studio: StudioTestServer;
let appDir: string;
let outsideDir: string;
let port: number;
const APP_SCRIPT = 'console.log("studio-security-test-script");\n';
const seen: RawResponse[] = [];
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const specFile = () => join(studio.rootDir, 'machines', 'order-support', 'order-support.flow.json');

async function send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await sendRaw(port, method, path, headers, body);
  seen.push(response);
  return response;
}

beforeAll(async () => {
  // A scratch "built app" folder holding secrets next to the page, so "not served" is tested against files that exist.
  appDir = await mkdtemp(join(tmpdir(), 'flowing-studio-app-'));
  await writeFile(join(appDir, 'index.html'), `<!doctype html><html><body>${PAGE_MARKER}</body></html>\n`);
  await mkdir(join(appDir, 'assets'));
  await writeFile(join(appDir, 'assets', 'app.js'), APP_SCRIPT);
  await writeFile(join(appDir, '.env'), `OPENAI_API_KEY=${SECRET}\n`);
  await writeFile(join(appDir, '.env.local'), `OPENAI_API_KEY=${SECRET}\n`);
  await writeFile(join(appDir, 'key.pem'), `-----BEGIN PRIVATE KEY-----\n${SECRET}\n-----END PRIVATE KEY-----\n`);
  await mkdir(join(appDir, '.git'));
  await writeFile(join(appDir, '.git', 'config'), `[remote "origin"]\n\turl = https://user:${SECRET}@example.com/x.git\n`);
  await mkdir(join(appDir, 'sub'));
  await writeFile(join(appDir, 'sub', '.env'), `TOKEN=${SECRET}\n`);
  // Secrets outside the served folder, reached by symlinks planted inside it.
  outsideDir = await mkdtemp(join(tmpdir(), 'flowing-studio-outside-'));
  await writeFile(join(outsideDir, 'secret.txt'), `${SECRET}\n`);
  await writeFile(join(outsideDir, 'secret.js'), `export const key = '${SECRET}';\n`);
  await symlink(join(outsideDir, 'secret.txt'), join(appDir, 'leak.txt'));
  await symlink(join(outsideDir, 'secret.js'), join(appDir, 'assets', 'leak.js'));
  await symlink(outsideDir, join(appDir, 'linked'));
  await symlink('../outside-sibling/secret.txt', join(appDir, 'relative-leak.txt'));
  // A symlink that stays inside the folder is fine: it is the link's target that counts, not its name.
  await symlink(join(appDir, 'assets', 'app.js'), join(appDir, 'alias.js'));
  studio = await startStudioServer({ appDir });
  port = studio.port;
  await writeFile(join(studio.rootDir, '.env'), `OPENAI_API_KEY=${SECRET}\n`);
});

afterAll(async () => {
  await studio?.close();
  if (appDir) await rm(appDir, { recursive: true, force: true });
  if (outsideDir) await rm(outsideDir, { recursive: true, force: true });
});

async function validSave() {
  const loaded = await send('GET', '/api/machines/order-support');
  return { spec: { ...loaded.json.spec, description: 'saved by the security test' }, baseVersion: loaded.json.version as string };
}

/** Every kind of route: the API (reads and writes) and the built app's files (and paths a dev server would have). */
const ROUTES: Array<[string, string, unknown?]> = [
  ['GET', '/api/machines'],
  ['POST', '/api/machines', { id: 'rebound-machine' }],
  ['GET', '/api/machines/order-support'],
  ['PUT', '/api/machines/order-support', 'save'],
  ['DELETE', '/api/machines/order-support', 'delete'],
  ['POST', '/api/machines/order-support/generate'],
  ['GET', '/api/tools'],
  ['POST', '/api/tools', { name: 'rebound_tool' }],
  ['OPTIONS', '/api/machines/order-support'],
  ['GET', '/'],
  ['GET', '/index.html'],
  ['GET', '/assets/app.js'],
  ['HEAD', '/assets/app.js'],
  ['POST', '/'],
  ['GET', '/@vite/client'],
  ['GET', '/node_modules/vite/package.json'],
];

/** The body a route is sent with: a fresh valid save, the current version for a delete, or the given JSON. */
async function payloadFor(body: unknown): Promise<unknown> {
  if (body === 'save') return validSave();
  if (body === 'delete') return { baseVersion: (await validSave()).baseVersion };
  return body;
}

/** Neither the spec nor the files a refused write would create changed. */
async function expectNothingWritten(before: string): Promise<void> {
  expect(sha256(await readFile(specFile()))).toBe(before);
  expect(existsSync(join(studio.rootDir, 'tools', 'rebound_tool.ts'))).toBe(false);
  expect(existsSync(join(studio.rootDir, 'machines', 'rebound-machine'))).toBe(false);
}

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
        const response = await send(method, path, { Host: host }, await payloadFor(body));
        expect(response.status, `${method} ${path} Host ${host}`).toBe(403);
        expect(response.body).not.toContain(PAGE_MARKER);
        expect(response.body).not.toContain('studio-security-test-script');
      }
    }
    const api = await send('GET', '/api/machines', { Host: `evil.example:${port}` });
    expect(api.json.code).toBe('STUDIO_FORBIDDEN_HOST');
    await expectNothingWritten(before);
  });

  it('never switches protocols: an upgrade request is refused with a foreign Host or Origin, and not upgraded with its own', async () => {
    const upgrade = (headers: Record<string, string>) =>
      rawHttp(
        port,
        requestText(port, 'GET', '/', {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
          ...headers,
        }),
        { headOnly: true },
      );
    expect((await upgrade({ Host: `evil.example:${port}` })).status).toBe(403);
    expect((await upgrade({ Origin: 'http://evil.example' })).status).toBe(403);
    expect((await upgrade({})).status).not.toBe(101);
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
  const WRITES = ROUTES.filter(([method]) => method !== 'GET' && method !== 'HEAD');

  it('refuses every non-GET route (and the API reads) from a foreign Origin with 403 STUDIO_FORBIDDEN_ORIGIN', async () => {
    const before = sha256(await readFile(specFile()));
    for (const [method, path, body] of [
      ...WRITES,
      ['GET', '/api/machines'],
      ['GET', '/api/machines/order-support'],
      ['GET', '/api/tools'],
    ] as typeof ROUTES) {
      for (const origin of origins()) {
        const response = await send(method, path, { Origin: origin, 'Access-Control-Request-Method': 'PUT' }, await payloadFor(body));
        expect(response.status, `${method} ${path} Origin ${origin}`).toBe(403);
        expect(response.json?.code).toBe('STUDIO_FORBIDDEN_ORIGIN');
      }
    }
    await expectNothingWritten(before);
  });

  it('refuses every non-GET route with Sec-Fetch-Site cross-site or same-site (no Origin) with 403', async () => {
    for (const [method, path, body] of WRITES) {
      for (const site of ['cross-site', 'same-site']) {
        const response = await send(method, path, { 'Sec-Fetch-Site': site }, await payloadFor(body));
        expect(response.status, `${method} ${path} ${site}`).toBe(403);
        expect(response.json?.code).toBe('STUDIO_FORBIDDEN_ORIGIN');
      }
    }
  });

  it("refuses cross-site subresource reads of the app's files but lets a link open the page", async () => {
    const script = await send('GET', '/assets/app.js', {
      'Sec-Fetch-Site': 'cross-site',
      'Sec-Fetch-Mode': 'no-cors',
      'Sec-Fetch-Dest': 'script',
    });
    expect(script.status).toBe(403);
    expect(script.body).not.toContain('studio-security-test-script');
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

describe('X7: only the built files are served', () => {
  const paths = () => [
    '/.env',
    '/.env?raw',
    '/.env.local',
    '/%2eenv',
    '/.env%3Fraw',
    '/sub/.env',
    '/sub/%2eenv',
    '/.git/config',
    '/%2egit/config',
    '/key.pem',
    '/KEY.PEM',
    '/key%2epem',
    '/leak.txt',
    '/assets/leak.js',
    '/linked/secret.txt',
    '/linked/secret.js',
    '/relative-leak.txt',
    '/linked',
    '/assets',
    '/..%2fsecret.txt',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/assets/..%2f..%2fetc/passwd',
    '/assets%2fleak.js',
    '/assets/leak.js%00',
    '/@fs/etc/passwd',
    `/@fs${appDir}/.env`,
    `/@fs${outsideDir}/secret.txt`,
    '/node_modules/vite/package.json',
    `/${studio.rootDir}/.env`,
    '/etc/passwd',
    '/index.html%00.js',
  ];

  it('answers 404 with no file content for dotfiles, key files, symlinks leading out and paths outside the app', async () => {
    for (const path of paths()) {
      const response = await send('GET', path);
      expect(response.status, path).toBe(404);
      expect(response.json?.code, path).toBe('STUDIO_NOT_FOUND');
      expect(response.body, path).not.toContain(SECRET);
      expect(response.body, path).not.toContain('root:x:0:0');
    }
  });

  it('never follows a symlink planted inside the served folder to a secret outside it', async () => {
    for (const path of ['/leak.txt', '/assets/leak.js', '/linked/secret.txt', '/relative-leak.txt']) {
      const get = await send('GET', path);
      const head = await send('HEAD', path);
      expect(get.status, path).toBe(404);
      expect(head.status, path).toBe(404);
      expect(get.body + head.body, path).not.toContain(SECRET);
    }
  });

  it('serves the page, its assets and a symlink whose target stays inside (the refusals above are not vacuous)', async () => {
    for (const path of ['/', '/index.html']) {
      const page = await send('GET', path);
      expect(page.status, path).toBe(200);
      expect(page.body).toContain(PAGE_MARKER);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
    }
    const script = await send('GET', '/assets/app.js');
    expect(script.status).toBe(200);
    expect(script.body).toBe(APP_SCRIPT);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.headers['cache-control']).toContain('immutable');
    const alias = await send('GET', '/alias.js');
    expect(alias.status).toBe(200);
    expect(alias.body).toBe(APP_SCRIPT);
  });
});
