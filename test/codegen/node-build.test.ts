import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

/**
 * Issue 7, items 2-3: generated modules import each other with `.js` specifiers, so the same files run under tsx and,
 * after a user's `tsc` build with NodeNext resolution, under plain `node` (no loader). The project here is laid out as a
 * user's: generated files and tools (written with `.js` specifiers, as NodeNext wants), `@flowing/runtime` from its
 * package (the built `dist/`, as a user installs it).
 */
let dir: string;

const SESSION = `
import { createActor, waitFor } from 'xstate';
import { orderSupport } from './MACHINE';
const actor = createActor(orderSupport.machine, { input: {} }).start();
actor.send({ type: 'USER_MESSAGE', text: 'Where is my order A1001?' });
const done = await waitFor(actor, (s) => s.matches({ active: 'idle' }) && s.context.reply !== undefined, { timeout: 10_000 });
console.log(JSON.stringify({ state: done.value, order: done.context.order?.order_id, reply: done.context.reply }));
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-node-build-'));
  await cp(join(REPO_DIR, 'machines/order-support'), join(dir, 'machines/order-support'), { recursive: true });
  await mkdir(join(dir, 'tools'));
  for (const file of (await readdir(join(REPO_DIR, 'tools'))).filter((f) => f.endsWith('.ts'))) {
    const text = await readFile(join(REPO_DIR, 'tools', file), 'utf8');
    await writeFile(join(dir, 'tools', file), text.replace(/(from '\.[^']*)\.ts'/g, "$1.js'"));
  }
  await symlink(join(REPO_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        outDir: 'dist',
        rootDir: '.',
        types: [],
      },
      include: ['machines', 'tools'],
    }),
  );
  await writeFile(join(dir, 'session.ts'), SESSION.replace('MACHINE', 'machines/order-support/order-support.machine.js'));
  await writeFile(join(dir, 'session.mjs'), SESSION.replace('MACHINE', 'dist/machines/order-support/order-support.machine.js'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('generated modules outside the repository', () => {
  it('run under tsx from their sources', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'session.ts'], { cwd: dir });
    expect(JSON.parse(stdout)).toMatchObject({ state: { active: 'idle' }, order: 'A1001' });
  }, 60_000);

  it('run under plain node after a tsc build with NodeNext resolution', async () => {
    // Emit only: the type check of the same files under NodeNext is codegen's own (tsconfig.base.json is NodeNext).
    await run(process.execPath, [join(REPO_DIR, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--noCheck'], { cwd: dir });
    const machine = await readFile(join(dir, 'dist/machines/order-support/order-support.machine.js'), 'utf8');
    expect(machine).toContain('from "./order-support.registry.js"');
    const { stdout } = await run(process.execPath, ['session.mjs'], { cwd: dir });
    expect(JSON.parse(stdout)).toMatchObject({ state: { active: 'idle' }, order: 'A1001' });
  }, 120_000);
});
