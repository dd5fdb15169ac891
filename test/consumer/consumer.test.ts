import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedPackages, newProject, npm, packAll, type Tarballs } from './packs.ts';

const run = promisify(execFile);
const FLOWING_PACKAGES = ['flowing', '@flowing/spec', '@flowing/runtime', '@flowing/codegen', '@flowing/studio'];
const NOT_IN_A_SERVICE = ['react', 'react-dom', 'vite', '@xyflow/react', 'ts-morph', 'typescript', 'tsx', 'elkjs', 'openai'];

const SERVICE = `import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { orderLookup } from '../machines/order-lookup/order-lookup.machine.js';

const runtime = createRuntime({ machines: [orderLookup], store: createMemoryStore() });
const session = await runtime.createSession(orderLookup);
const found = await session.send({ type: 'ASK', orderId: 'A1' });
const missing = await session.send({ type: 'ASK', orderId: 'Z9' });
const snapshot = await session.snapshot();
console.log(JSON.stringify({ found: found.state, missing: missing.state, context: snapshot.context }));
`;

let work: string;
let tarballs: Tarballs;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'flowing-consumer-'));
  tarballs = await packAll(join(work, 'packs'));
}, 600_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('Flowing installed from its packages into a project outside the repository', { timeout: 400_000 }, () => {
  it('packs dist/ with types and no sources or tests', async () => {
    expect(Object.keys(tarballs).sort()).toEqual([...FLOWING_PACKAGES].sort());
    const { stdout } = await run('tar', ['tzf', tarballs['@flowing/runtime']!]);
    const files = stdout.trim().split('\n');
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/dist/index.d.ts.map');
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((file) => !file.startsWith('package/dist/') && !/^package\/(package\.json|README\.md|LICENSE)$/.test(file))).toEqual([]);
  });

  it('a service depending on @flowing/runtime alone installs no UI, build or code generation packages', async () => {
    const dir = join(work, 'runtime-only');
    await newProject(dir, tarballs, ['@flowing/runtime', '@flowing/spec']);
    await npm(dir, ['install']);
    const { names, bytes } = await installedPackages(dir);
    console.log(`runtime-only project: ${names.length} packages, ${(bytes / 1024 / 1024).toFixed(1)} MB in node_modules (${names.join(', ')})`);
    expect(names.filter((name) => NOT_IN_A_SERVICE.includes(name))).toEqual([]);
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e',
      "const m = await import('@flowing/runtime'); console.log(typeof m.createRuntime, typeof m.defineTool)"], { cwd: dir });
    expect(stdout.trim()).toBe('function function');
  });

  it('init, codegen, a tsc build run with plain node, and the same service under tsx', async () => {
    const dir = join(work, 'app');
    await newProject(dir, tarballs, FLOWING_PACKAGES);
    await npm(dir, ['install']);
    const init = await run('npx', ['--no-install', 'flowing', 'init'], { cwd: dir });
    expect(init.stdout).toContain('+ machines/order-lookup/order-lookup.flow.json');
    expect(init.stdout).toContain('+ tools/get_order_status.ts');
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    expect(pkg.scripts).toMatchObject({ studio: 'flowing studio', codegen: 'flowing codegen', 'codegen:check': 'flowing codegen --check' });
    await npm(dir, ['install']);
    await npm(dir, ['install', '--save-dev', 'tsx@4.23.15']);

    const codegen = await run('npx', ['--no-install', 'flowing', 'codegen'], { cwd: dir }).catch((error) => error);
    expect(codegen.stdout + codegen.stderr).not.toMatch(/error/i);
    await run('npx', ['--no-install', 'flowing', 'codegen', '--check'], { cwd: dir });

    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src/server.ts'), SERVICE);
    await run('npx', ['--no-install', 'tsc', '-p', '.'], { cwd: dir });
    const expected = { found: { active: 'answered' }, missing: { active: 'idle' } };
    const plain = await run(process.execPath, ['dist/src/server.js'], { cwd: dir });
    expect(JSON.parse(plain.stdout)).toMatchObject({ ...expected, context: { orderId: 'Z9', status: 'shipped', problem: 'no such order' } });
    const viaTsx = await run('npx', ['--no-install', 'tsx', 'src/server.ts'], { cwd: dir });
    expect(JSON.parse(viaTsx.stdout)).toMatchObject(expected);
  });
});
