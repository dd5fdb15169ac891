import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_MACHINE_ID, EXAMPLE_SPEC, EXAMPLE_TOOL, EXAMPLE_TOOL_NAME } from '../../bin/init/template.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);
let dir: string;

/**
 * The CLI from the sources with only tsx's ES module loader, as the built CLI registers it (`tsx/esm/api`): a `.ts`
 * file in a CommonJS scope then reaches Node's own CommonJS loader, as it does for users. (The tests' usual
 * `--import tsx` also compiles CommonJS, which would hide the failure.)
 */
async function flowing(...args: string[]): Promise<{ code: number; stdout: string }> {
  const argv = ['--conditions=@flowing/source', '--import', import.meta.resolve('tsx/esm'), join(REPO_DIR, 'bin/cli.ts'), ...args];
  try {
    const { stdout } = await run(process.execPath, argv, { cwd: dir, timeout: 120_000 });
    return { code: 0, stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '' };
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-cjs-tools-'));
  await symlink(join(REPO_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
  // What `npm init -y` writes with npm 11, and the example machine and tool, as an older init left them.
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'shop', version: '1.0.0', main: 'index.js', type: 'commonjs' }, null, 2),
  );
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', strict: true, skipLibCheck: true } }),
  );
  await mkdir(join(dir, 'machines', EXAMPLE_MACHINE_ID), { recursive: true });
  await writeFile(join(dir, 'machines', EXAMPLE_MACHINE_ID, `${EXAMPLE_MACHINE_ID}.flow.json`), JSON.stringify(EXAMPLE_SPEC, null, 2));
  await mkdir(join(dir, 'tools'));
  await writeFile(join(dir, 'tools', `${EXAMPLE_TOOL_NAME}.ts`), EXAMPLE_TOOL);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a tool file Node reads as CommonJS', () => {
  it("codegen and validate name the cause (the package type) and the fix, and say the unknown tool's file exists", async () => {
    for (const command of ['codegen', 'validate']) {
      const result = await flowing(command);
      expect(result.code, command).toBe(1);
      expect(result.stdout, command).toContain(
        `CODEGEN_TOOL_LOAD_FAILED (warning) tools/${EXAMPLE_TOOL_NAME}.ts could not be imported: Node loads it as CommonJS (package.json has "type": "commonjs"), which does not compile TypeScript, so it failed with "SyntaxError: Missing initializer in const declaration". Generated machines and tools are ES modules: set "type": "module" in package.json, or, if your other code must stay CommonJS, add tools/package.json with {"type": "module"}`,
      );
      expect(result.stdout, command).toContain(
        `SPEC_UNKNOWN_TOOL tool '${EXAMPLE_TOOL_NAME}' is in tools/${EXAMPLE_TOOL_NAME}.ts, which exists but could not be imported`,
      );
    }
  }, 180_000);

  it('imports once tools/ has a package.json of its own saying "type": "module"', async () => {
    await writeFile(join(dir, 'tools/package.json'), '{ "type": "module" }\n');
    await writeFile(join(dir, 'machines/package.json'), '{ "type": "module" }\n');
    const result = await flowing('validate');
    expect(result.stdout).not.toContain('CODEGEN_TOOL_LOAD_FAILED');
    expect(result.code).toBe(0);
  }, 120_000);
});
