import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

describe('the project', () => {
  it('type-checks as a whole, generated machines, tools and tests included (tsc --noEmit)', async () => {
    const result = await run(process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.json'], {
      cwd: REPO_DIR,
    }).then(
      () => ({ code: 0, output: '' }),
      (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 240_000);
});
