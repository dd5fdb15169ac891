import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { newSpecSkeleton, SPEC_SCHEMA_REFERENCE } from '@flowing/codegen';
import { formatSpec, validateSpec } from '@flowing/spec';
import { EXAMPLE_SPEC } from '../../bin/init/template.ts';
import { cliArgs } from '../helpers/cli.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-new-spec-'));
  await symlink(join(REPO_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'new-spec', private: true, type: 'module' }));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', strict: true, skipLibCheck: true }, include: ['src', 'machines'] }),
  );
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'src/index.ts'), 'export {};\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('new specs carry $schema', () => {
  it("newSpecSkeleton and init's example point $schema at the JSON Schema codegen writes next to them", async () => {
    const spec = newSpecSkeleton('returns-desk');
    expect(validateSpec(spec).problems.filter((p) => p.severity === 'error')).toEqual([]);
    const text = formatSpec(spec);
    expect(text.split('\n')[1]).toBe(`  "$schema": "${SPEC_SCHEMA_REFERENCE}",`);
    expect(EXAMPLE_SPEC.$schema).toBe(SPEC_SCHEMA_REFERENCE);

    const specFile = join(dir, 'machines/returns-desk/returns-desk.flow.json');
    await mkdir(dirname(specFile), { recursive: true });
    await writeFile(specFile, text);
    await run(process.execPath, cliArgs('codegen'), { cwd: dir });
    const schema = JSON.parse(await readFile(resolve(dirname(specFile), SPEC_SCHEMA_REFERENCE), 'utf8')) as {
      properties?: Record<string, unknown>;
    };
    expect(Object.keys(schema.properties ?? {})).toEqual(expect.arrayContaining(['$schema', 'specVersion', 'id', 'states']));
  }, 120_000);
});
