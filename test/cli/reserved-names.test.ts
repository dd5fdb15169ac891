import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaffoldTool } from '@flowing/codegen';
import { RESERVED_FILE_NAMES } from '@flowing/spec';
import { cliArgs } from '../helpers/cli.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-reserved-'));
  await symlink(join(REPO_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'reserved', private: true, type: 'module' }));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', strict: true, skipLibCheck: true } }),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function flowing(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, cliArgs(...args), { cwd: dir, timeout: 60_000 });
    return { code: 0, stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '' };
  }
}

async function exists(path: string): Promise<boolean> {
  return access(join(dir, path)).then(
    () => true,
    () => false,
  );
}

async function writeSpec(id: string, tool: string): Promise<string> {
  const file = `machines/${id}/${id}.flow.json`;
  await mkdir(join(dir, 'machines', id), { recursive: true });
  const spec = {
    specVersion: 1,
    id,
    events: {},
    initial: 'a',
    states: { a: { invoke: { tool, input: {}, onDone: 'b', onError: 'b' } }, b: { type: 'final' } },
  };
  await writeFile(join(dir, file), JSON.stringify(spec, null, 2));
  return file;
}

describe('names that cannot name a file or a module: then, con, node_modules', () => {
  it('are one list, holding then, node_modules and the Windows device names', () => {
    expect([...RESERVED_FILE_NAMES.keys()]).toEqual(
      expect.arrayContaining(['then', 'node_modules', 'con', 'prn', 'aux', 'nul', 'com1', 'lpt9']),
    );
  });

  for (const tool of ['then', 'con', 'node_modules']) {
    it(`tool '${tool}': validate and codegen both refuse it with SPEC_RESERVED_NAME, and codegen writes no tools/${tool}.ts`, async () => {
      const file = await writeSpec(`uses-${tool.replace('_', '-')}`, tool);
      const validate = await flowing('validate', file);
      expect(validate.code).toBe(1);
      expect(validate.stdout).toContain(`#/states/a/invoke/tool SPEC_RESERVED_NAME tool name '${tool}' is reserved:`);
      const codegen = await flowing('codegen', file);
      expect(codegen.code).toBe(1);
      expect(codegen.stdout).toContain('SPEC_RESERVED_NAME');
      expect(await exists(`tools/${tool}.ts`)).toBe(false);
      await expect(scaffoldTool(dir, tool)).rejects.toThrow(`tool name '${tool}' is reserved`);
      expect(await exists(`tools/${tool}.ts`)).toBe(false);
    }, 60_000);
  }

  for (const id of ['then', 'con']) {
    it(`machine id '${id}' is refused by validate with SPEC_RESERVED_NAME at /id`, async () => {
      const file = await writeSpec(id, 'fine_tool');
      const validate = await flowing('validate', file, '--json');
      expect(validate.code).toBe(1);
      const problems = (JSON.parse(validate.stdout) as { problems: Array<{ code: string; path: string; message: string }> }).problems;
      expect(problems.find((p) => p.path === '/id')).toMatchObject({
        code: 'SPEC_RESERVED_NAME',
        message: expect.stringContaining(`machine id '${id}' is reserved`),
      });
    }, 60_000);
  }
});
