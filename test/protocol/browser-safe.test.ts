// @flowing/protocol runs in the studio's browser bundle and in the runtime on Node: its own tsconfig has neither DOM
// nor Node types, so a use of either fails its build. These tests build it that way, and show that the
// configuration does refuse such a use.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

/** `tsc --noEmit -p <config>`: its exit code and what it printed. */
async function typecheck(config: string): Promise<{ code: number; output: string }> {
  return run(process.execPath, [join(REPO_DIR, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', config], { cwd: REPO_DIR }).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
  );
}

let dir: string;
beforeAll(async () => {
  // The protocol reads @flowing/spec through its declarations (spec/dist), as its own build does.
  await run(process.execPath, [join(REPO_DIR, 'node_modules/typescript/bin/tsc'), '-b', 'spec'], { cwd: REPO_DIR });
  dir = await mkdtemp(join(tmpdir(), 'flowing-protocol-safe-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A project with the protocol's own compiler options (extending protocol/tsconfig.json) over one planted file that
 * imports the protocol's sources, so the options under test are the package's, not these.
 */
async function plantedProject(name: string, source: string): Promise<string> {
  const file = join(dir, `${name}.ts`);
  await writeFile(
    file,
    `import { sessionAt } from '${relative(dir, join(REPO_DIR, 'protocol/index.ts'))}';\nexport const fold = sessionAt;\n${source}\n`,
  );
  const config = join(dir, `${name}.tsconfig.json`);
  await writeFile(
    config,
    JSON.stringify({
      extends: join(REPO_DIR, 'protocol/tsconfig.json'),
      compilerOptions: { composite: false, declaration: false, declarationMap: false, rootDir: '/', noEmit: true },
      files: [file],
    }),
  );
  return config;
}

describe('@flowing/protocol is browser-safe', () => {
  it('type-checks with its own configuration: ES2023 only, no DOM and no Node types', async () => {
    const result = await typecheck(join(REPO_DIR, 'protocol/tsconfig.json'));
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('refuses a use of the DOM (document) under that configuration', async () => {
    const result = await typecheck(await plantedProject('dom', 'export const title = document.title;'));
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/dom\.ts\(\d+,\d+\): error TS\d+: Cannot find name 'document'/);
  }, 120_000);

  it('refuses a use of Node (process, Buffer) under that configuration', async () => {
    const result = await typecheck(
      await plantedProject('node', 'export const home = process.env.HOME;\nexport const bytes = Buffer.from("x");'),
    );
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/node\.ts\(\d+,\d+\): error TS\d+: Cannot find name 'process'/);
    expect(result.output).toMatch(/node\.ts\(\d+,\d+\): error TS\d+: Cannot find name 'Buffer'/);
  }, 120_000);

  it('compiles the planted project when the planted file uses the language alone (the refusals above are about DOM and Node)', async () => {
    const result = await typecheck(await plantedProject('plain', 'export const size = new Map<string, number>([["a", 1]]).size;'));
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);
});
