import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

/** One table row: name, then wall µs, min-max, ratio, cpu µs, cpu ratio, gc µs. */
const ROW = /^ {2}(\([a-f]\) [^\d]+?)\s+(\d+\.\d)\s+\d+-\d+\s+(\d+\.\d\d)\s+\d+\.\d\s+\d+\.\d\d\s+\d+\.\d/;

describe('npm run bench (smoke: tiny rounds, the figures are not looked at)', () => {
  it('measures every case in both tables, each against bare XState of its own table', async () => {
    const { stdout } = await run(process.execPath, cliArgs('bench', '--rounds', '1', '--sessions', '20', '--warmup', '20', '--concurrency', '4'), { cwd: REPO_DIR, timeout: 170_000 });
    const lines = stdout.split('\n');
    const sequential = lines.indexOf('one session at a time (wall µs = latency of a session):');
    const concurrent = lines.indexOf('4 sessions in flight (wall µs = elapsed time / sessions):');
    expect(sequential).toBeGreaterThan(-1);
    expect(concurrent).toBeGreaterThan(sequential);
    const rows = (from: number, to: number) => lines.slice(from, to).map((line) => ROW.exec(line)).filter((m) => m !== null).map((m) => ({ name: m[1]!.trim(), ratio: Number(m[3]) }));
    const first = rows(sequential, concurrent);
    const second = rows(concurrent, lines.length);
    // Redis is measured when a redis-server is installed (CI installs it), skipped with the reason otherwise.
    const redis = stdout.includes('(e) Flowing, Redis: skipped') ? [] : ['(e) Flowing, Redis'];
    expect(first.map((r) => r.name).sort()).toEqual(['(a) hand-written async', '(b) bare XState', '(c) Flowing, memory store', '(d) Flowing, SQLite', ...redis, '(f) SQLite store alone'].sort());
    expect(second.map((r) => r.name).sort()).toEqual(['(b) bare XState', '(c) Flowing, memory store', '(d) Flowing, SQLite', ...redis, '(f) SQLite store alone'].sort());
    for (const row of [...first, ...second]) expect(row.ratio).toBeGreaterThan(0);
    expect(first.find((r) => r.name === '(b) bare XState')!.ratio).toBe(1);
    expect(second.find((r) => r.name === '(b) bare XState')!.ratio).toBe(1);
    expect(stdout).toMatch(/<= 1\.5x: (met|missed)/);
    expect(stdout).toMatch(/idle sessions: 10000 waiting for input, \d+ bytes retained per session/);
  }, 180_000);

  it('refuses a bad option with BENCH_BAD_OPTION and exit code 2, measuring nothing', async () => {
    const failure = await run(process.execPath, cliArgs('bench', '--concurrency', '0'), { cwd: REPO_DIR, timeout: 30_000 }).catch((error: { code: number; stdout: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stdout: string }).stdout).toContain('error BENCH_BAD_OPTION: --concurrency must be a positive integer');
  });
});
