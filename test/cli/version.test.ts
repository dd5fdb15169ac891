import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { GENERATOR_VERSION } from '@flowing/codegen';
import { cliArgs } from '../helpers/cli.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

async function versionOf(folder: string): Promise<string> {
  return (JSON.parse(await readFile(join(REPO_DIR, folder, 'package.json'), 'utf8')) as { version: string }).version;
}

describe('one version number everywhere', () => {
  it('flowing --version, every package.json and the generator version in generated headers agree', async () => {
    const version = await versionOf('.');
    for (const folder of ['spec', 'runtime', 'codegen', 'studio']) expect(await versionOf(folder), folder).toBe(version);
    const { stdout } = await run(process.execPath, cliArgs('--version'));
    expect(stdout.trim()).toBe(version);
    expect(GENERATOR_VERSION).toBe(version);
    for (const file of ['machines/order-support/order-support.machine.ts', 'machines/incident-triage/incident-triage.registry.ts']) {
      const header = (await readFile(join(REPO_DIR, file), 'utf8')).split('\n')[1];
      expect(header, file).toMatch(new RegExp(`generator:flowing@${version.replace(/\./g, '\\.')}$`));
    }
  });
});
