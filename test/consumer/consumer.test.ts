import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage } from '../e2e/browser.ts';
import { installedPackages, newProject, npm, packAll, type Tarballs } from './packs.ts';

const run = promisify(execFile);
const FLOWING_PACKAGES = ['flowing', '@flowing/spec', '@flowing/protocol', '@flowing/runtime', '@flowing/codegen', '@flowing/studio'];
const NOT_IN_A_SERVICE = [
  'react',
  'react-dom',
  'vite',
  '@xyflow/react',
  'ts-morph',
  'typescript',
  'tsx',
  'elkjs',
  'openai',
  'better-sqlite3',
  'ioredis',
  'hono',
  '@hono/node-server',
];

const SERVICE = `import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { orderLookup } from '../machines/order-lookup/order-lookup.machine.js';

const runtime = createRuntime({ machines: [orderLookup], store: createMemoryStore() });
const session = await runtime.createSession(orderLookup);
const found = await session.send({ type: 'ASK', orderId: 'A1' });
const missing = await session.send({ type: 'ASK', orderId: 'Z9' });
const snapshot = await session.snapshot();
const stateOf = (result: typeof found) => (result.applied ? result.state : result.code);
console.log(JSON.stringify({ found: stateOf(found), missing: stateOf(missing), context: snapshot.context }));
`;

let work: string;
let tarballs: Tarballs;
let app: Promise<string> | undefined;

/** One project made the way a user makes it: the packages installed, `flowing init`, `npm install`, `flowing codegen`. */
function appProject(): Promise<string> {
  app ??= (async () => {
    const dir = join(work, 'app');
    await newProject(dir, tarballs, FLOWING_PACKAGES);
    await npm(dir, ['install']);
    const init = await run('npx', ['--no-install', 'flowing', 'init'], { cwd: dir });
    expect(init.stdout).toContain('+ machines/order-lookup/order-lookup.flow.json');
    expect(init.stdout).toContain('+ tools/get_order_status.ts');
    await npm(dir, ['install']);
    await npm(dir, ['install', '--save-dev', 'tsx@4.23.15']);
    await run('npx', ['--no-install', 'flowing', 'codegen'], { cwd: dir });
    await run('npx', ['--no-install', 'flowing', 'codegen', '--check'], { cwd: dir });
    return dir;
  })();
  return app;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'flowing-consumer-'));
  tarballs = await packAll(join(work, 'packs'));
}, 600_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('Flowing installed from its packages into a project outside the repository', { timeout: 900_000 }, () => {
  it('packs dist/ with types and no sources or tests', async () => {
    expect(Object.keys(tarballs).sort()).toEqual([...FLOWING_PACKAGES].sort());
    const { stdout } = await run('tar', ['tzf', tarballs['@flowing/runtime']!]);
    const files = stdout.trim().split('\n');
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/dist/index.d.ts.map');
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(
      files.filter((file) => !file.startsWith('package/dist/') && !/^package\/(package\.json|README\.md|LICENSE)$/.test(file)),
    ).toEqual([]);
  });

  it('a service depending on @flowing/runtime alone installs no UI, build or code generation packages, and no store driver or HTTP server it did not ask for', async () => {
    const dir = join(work, 'runtime-only');
    await newProject(dir, tarballs, ['@flowing/runtime', '@flowing/protocol', '@flowing/spec']);
    await npm(dir, ['install']);
    const { names, bytes } = await installedPackages(dir);
    console.log(
      `runtime-only project: ${names.length} packages, ${(bytes / 1024 / 1024).toFixed(1)} MB in node_modules (${names.join(', ')})`,
    );
    expect(names.filter((name) => NOT_IN_A_SERVICE.includes(name))).toEqual([]);
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('@flowing/runtime'); console.log(typeof m.createRuntime, typeof m.defineTool)"],
      { cwd: dir },
    );
    expect(stdout.trim()).toBe('function function');
  });

  it('init, codegen, a tsc build run with plain node, and the same service under tsx', async () => {
    const dir = await appProject();
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src/server.ts'), SERVICE);
    await run('npx', ['--no-install', 'tsc', '-p', '.'], { cwd: dir });
    const expected = { found: 'answered', missing: 'idle' };
    const plain = await run(process.execPath, ['dist/src/server.js'], { cwd: dir });
    expect(JSON.parse(plain.stdout)).toMatchObject({
      ...expected,
      context: { orderId: 'Z9', status: 'shipped', problem: 'no such order' },
    });
    const viaTsx = await run('npx', ['--no-install', 'tsx', 'src/server.ts'], { cwd: dir });
    expect(JSON.parse(viaTsx.stdout)).toMatchObject(expected);
  });

  it('flowing studio serves the prebuilt studio: Chromium lists the machine, creates one, adds a state, saves and generates', async () => {
    const dir = await appProject();
    const started = performance.now();
    // The installed bin, as `npx flowing studio` runs it (without npx's own start-up, so the time is the studio's).
    const studio = spawn(process.execPath, ['node_modules/.bin/flowing', 'studio', '--port', '0'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    studio.stdout.on('data', (chunk) => {
      output += chunk;
    });
    studio.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const browser = await launchChromium();
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`flowing studio printed no URL: ${output}`)), 30_000);
        const check = () => {
          const match = /(http:\/\/\S+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        };
        check();
        studio.stdout.on('data', check);
        studio.once('exit', (code) => reject(new Error(`flowing studio exited with ${code}: ${output}`)));
      });
      const response = await fetch(url);
      expect(response.status).toBe(200);
      console.log(`flowing studio (installed project): first page served ${(performance.now() - started).toFixed(0)} ms after start`);
      expect(response.headers.get('content-type')).toMatch(/text\/html/);

      const { page, errors } = await openPage(browser);
      await page.goto(url);
      await page.locator('[data-testid=machine-select] option[value="order-lookup"]').waitFor({ state: 'attached' });
      await page.getByRole('button', { name: 'New machine' }).click();
      await page.getByLabel('Machine id').fill('returns-desk');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
      await page.click('[data-testid=add-state]');
      await page.locator('[data-testid=state-panel]').waitFor();
      await page.fill('[data-testid=state-name-input]', 'collecting');
      await page.press('[data-testid=state-name-input]', 'Enter');
      await page.locator('[data-testid=state-collecting]').waitFor();
      await page.click('[data-testid=save]');
      await expect.poll(() => page.locator('[data-testid=dirty-flag]').textContent()).toBe('saved');
      await page.click('[data-testid=generate]');
      await page.locator('[data-testid=generated-view]').waitFor({ timeout: 60_000 });

      const spec = JSON.parse(await readFile(join(dir, 'machines/returns-desk/returns-desk.flow.json'), 'utf8'));
      expect(spec.id).toBe('returns-desk');
      expect(Object.keys(spec.states)).toContain('collecting');
      expect(await readFile(join(dir, 'machines/returns-desk/returns-desk.machine.ts'), 'utf8')).toContain('collecting');
      expect(await readFile(join(dir, 'machines/returns-desk/returns-desk.registry.ts'), 'utf8')).toContain('returns-desk');
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      studio.kill('SIGTERM');
    }
  });
});
