import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'jsonc-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INIT_VERSIONS, initProject } from '../../bin/init/init.ts';
import { createCodegen } from '../../codegen/index.ts';
import { cliArgs } from '../helpers/cli.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-init-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function snapshotFiles(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path.slice(root.length + 1)] = await readFile(path, 'utf8');
    }
  }
  return out;
}

describe('flowing init', () => {
  it('sets up an empty folder: example machine and tool, package.json, tsconfig.json and .gitignore', async () => {
    const report = await initProject(join(dir, 'my-app'), '0.1.0');
    expect(report.added).toEqual([
      'machines/order-lookup/order-lookup.flow.json',
      'tools/get_order_status.ts',
      'package.json',
      'tsconfig.json',
      '.gitignore',
    ]);
    const pkg = JSON.parse(await readFile(join(dir, 'my-app/package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'my-app',
      type: 'module',
      dependencies: { '@flowing/runtime': '^0.1.0' },
      devDependencies: { flowing: '^0.1.0' },
      scripts: { studio: 'flowing studio', codegen: 'flowing codegen', 'codegen:check': 'flowing codegen --check' },
    });
    const tsconfig = JSON.parse(await readFile(join(dir, 'my-app/tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions).toMatchObject({ module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'] });
    expect(tsconfig.include).toEqual(expect.arrayContaining(['machines', 'tools']));
    expect(await readFile(join(dir, 'my-app/.gitignore'), 'utf8')).toContain('.flowing/');
  });

  it('allows the install scripts Flowing needs (better-sqlite3, esbuild) and keeps a decision the project made', async () => {
    await initProject(join(dir, 'new'), '0.1.0');
    expect(JSON.parse(await readFile(join(dir, 'new/package.json'), 'utf8')).allowScripts).toEqual({
      'better-sqlite3': true,
      esbuild: true,
    });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'shop', allowScripts: { 'esbuild@0.28.2': false } }));
    const report = await initProject(dir, '0.1.0');
    expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).allowScripts).toEqual({
      'esbuild@0.28.2': false,
      'better-sqlite3': true,
    });
    expect(report.added).toContain('package.json: allowScripts better-sqlite3');
    expect(report.kept).toContain('package.json: allowScripts esbuild (already decided)');
  });

  it('changes nothing on a second run and says so', async () => {
    await initProject(dir, '0.1.0');
    const before = await snapshotFiles(dir);
    const report = await initProject(dir, '0.1.0');
    expect(report.added).toEqual([]);
    expect(await snapshotFiles(dir)).toEqual(before);
  });

  it('adds only what an existing project lacks, keeping its comments, values, scripts and files', async () => {
    await writeFile(
      join(dir, 'package.json'),
      '{\n    "name": "shop",\n    "scripts": { "studio": "my-own-studio" },\n    "devDependencies": { "zod": "^4.0.0" }\n}\n',
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      '{\n  // our settings\n  "compilerOptions": { "module": "NodeNext", "outDir": "build" },\n  "include": ["src"]\n}\n',
    );
    await writeFile(join(dir, '.gitignore'), 'node_modules');
    await mkdir(join(dir, 'tools'));
    await writeFile(join(dir, 'tools/get_order_status.ts'), '// ours\n');

    const report = await initProject(dir, '0.1.0');
    expect(await readFile(join(dir, 'tools/get_order_status.ts'), 'utf8')).toBe('// ours\n');
    // No "type" and no code outside tools/: the project becomes ES modules.
    expect(report.added).toContain(
      'package.json: "type": "module" (was no "type", so CommonJS; generated machines and tools are ES modules, and no code here depends on the old type)',
    );
    expect(report.kept).toEqual(
      expect.arrayContaining(['tools/get_order_status.ts (exists)', 'package.json: script studio (already "my-own-studio")']),
    );
    const pkgText = await readFile(join(dir, 'package.json'), 'utf8');
    const pkg = JSON.parse(pkgText);
    expect(pkg.scripts.studio).toBe('my-own-studio');
    expect(pkg.devDependencies.zod).toBe('^4.0.0');
    expect(pkg.dependencies.zod).toBeUndefined();
    expect(pkg.dependencies['@flowing/runtime']).toBe('^0.1.0');
    expect(pkgText).toMatch(/^\{\n {4}"name"/);
    const tsText = await readFile(join(dir, 'tsconfig.json'), 'utf8');
    expect(tsText).toContain('// our settings');
    const tsconfig = parse(tsText);
    expect(tsconfig.compilerOptions).toMatchObject({ module: 'NodeNext', outDir: 'build', strict: true });
    expect(tsconfig.compilerOptions.moduleResolution).toBeUndefined();
    expect(tsconfig.include).toEqual(['src', 'machines', 'tools']);
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toBe('node_modules\ndist/\n.flowing/\n');
  });

  it('reports tsconfig settings it will not change, such as CommonJS output', async () => {
    await writeFile(join(dir, 'tsconfig.json'), '{ "compilerOptions": { "module": "commonjs" } }');
    const report = await initProject(dir, '0.1.0');
    expect(report.kept.some((line) => line.includes('compilerOptions.module is "commonjs"'))).toBe(true);
    expect(parse(await readFile(join(dir, 'tsconfig.json'), 'utf8')).compilerOptions.module).toBe('commonjs');
  });

  it('refuses an unreadable package.json with INIT_BAD_PACKAGE_JSON and writes nothing of it', async () => {
    await writeFile(join(dir, 'package.json'), '{ "name": ');
    await expect(initProject(dir, '0.1.0')).rejects.toMatchObject({ code: 'INIT_BAD_PACKAGE_JSON' });
    expect(await readFile(join(dir, 'package.json'), 'utf8')).toBe('{ "name": ');
  });

  it('refuses a path that is a file with INIT_NOT_A_DIRECTORY, exit 1 from the CLI', async () => {
    await writeFile(join(dir, 'file'), 'x');
    const result = await run(process.execPath, cliArgs('init', join(dir, 'file'))).then(
      () => ({ code: 0, stderr: '' }),
      (error) => error,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^INIT_NOT_A_DIRECTORY /);
  });

  it('gives a new project the same xstate, zod, typescript and @types/node versions the workspace pins', async () => {
    const runtime = JSON.parse(await readFile(join(REPO_DIR, 'runtime/package.json'), 'utf8'));
    const root = JSON.parse(await readFile(join(REPO_DIR, 'package.json'), 'utf8'));
    expect(INIT_VERSIONS.xstate).toBe(`^${runtime.dependencies.xstate}`);
    expect(INIT_VERSIONS.zod).toBe(`^${runtime.dependencies.zod}`);
    expect(INIT_VERSIONS.typescript).toBe(`^${root.devDependencies.typescript}`);
    expect(INIT_VERSIONS['@types/node']).toBe(`^${root.devDependencies['@types/node']}`);
  });

  it('switches a folder fresh from npm init -y ("type": "commonjs", no code) to "type": "module" and says why', async () => {
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'shop', version: '1.0.0', main: 'index.js', scripts: {}, type: 'commonjs' }, null, 2) + '\n',
    );
    await mkdir(join(dir, 'node_modules/left-pad'), { recursive: true });
    await writeFile(join(dir, 'node_modules/left-pad/index.js'), 'module.exports = 1;\n');
    const report = await initProject(dir, '0.1.0');
    expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).type).toBe('module');
    expect(report.added).toContain(
      'package.json: "type": "module" (was "type": "commonjs"; generated machines and tools are ES modules, and no code here depends on the old type)',
    );
    expect(report.added).not.toContain('machines/package.json');
    expect(await readdir(join(dir, 'tools'))).toEqual(['get_order_status.ts']);
  });

  for (const [what, file] of [
    ['TypeScript in src/', 'src/index.ts'],
    ['a JavaScript config file', 'eslint.config.js'],
  ] as const) {
    it(`keeps the type of a CommonJS project with ${what}, and makes machines/ and tools/ ES modules with a package.json each`, async () => {
      await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', type: 'commonjs' }, null, 2));
      await mkdir(join(dir, 'src'), { recursive: true });
      await writeFile(join(dir, file), 'module.exports = {};\n');
      const report = await initProject(dir, '0.1.0');
      expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).type).toBe('commonjs');
      expect(report.kept).toContain(
        `package.json: "type": "commonjs" (${file} depends on it; machines/ and tools/ get a package.json of their own with "type": "module")`,
      );
      expect(report.added).toEqual(expect.arrayContaining(['machines/package.json', 'tools/package.json']));
      for (const folder of ['machines', 'tools'])
        expect(JSON.parse(await readFile(join(dir, folder, 'package.json'), 'utf8'))).toEqual({ type: 'module' });
    });
  }

  it('leaves include alone when rootDir excludes machines/ and tools/, and says how to fix it', async () => {
    await writeFile(
      join(dir, 'tsconfig.json'),
      '{ "compilerOptions": { "module": "commonjs", "rootDir": "src", "outDir": "dist" }, "include": ["src"] }',
    );
    const report = await initProject(dir, '0.1.0');
    expect(parse(await readFile(join(dir, 'tsconfig.json'), 'utf8')).include).toEqual(['src']);
    expect(report.kept).toContain(
      'tsconfig.json: compilerOptions.rootDir is "src": machines/ and tools/ lie outside it, so tsc refuses them (TS6059) once your code imports a machine; set it to "." (the output then moves to dist/src/)',
    );
  });

  it('writes an example spec that validates against the tools it writes', async () => {
    await initProject(dir, '0.1.0');
    for (const name of ['node_modules']) await run('ln', ['-s', join(REPO_DIR, name), join(dir, name)]);
    const { stdout } = await run(process.execPath, cliArgs('validate', '--json'), { cwd: dir });
    expect(JSON.parse(stdout).problems).toEqual([]);
  });

  it('gives the example tool examples, so flowing test passes on a new project and covers every state and transition', async () => {
    await initProject(dir, '0.1.0');
    await run('ln', ['-s', join(REPO_DIR, 'node_modules'), join(dir, 'node_modules')]);
    const codegen = createCodegen({ rootDir: dir });
    try {
      const result = await codegen.generate(join(dir, 'machines/order-lookup/order-lookup.flow.json'), { typeCheck: false });
      expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
    } finally {
      codegen.dispose();
    }
    const { stdout } = await run(process.execPath, cliArgs('test'), { cwd: dir });
    expect(stdout).toContain('✓ order-lookup');
    expect(stdout).toMatch(/paths: (\d+)\/\1 passed/);
    expect(stdout).toContain('coverage: states 4/4, transitions 6/6');
    expect(stdout).not.toContain('warning');
  }, 60_000);
});
