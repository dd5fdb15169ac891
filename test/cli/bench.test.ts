import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

/** One table row: name, then wall µs, min-max, ratio, cpu µs, cpu ratio, gc µs. */
const ROW = /^ {2}(\([a-f]\) [^\d]+?)\s+(\d+\.\d)\s+\d+-\d+\s+(\d+\.\d\d)\s+\d+\.\d\s+\d+\.\d\d\s+\d+\.\d/;

/** A row of the cold-start table: name, then wall ms, min-max, ratio, cpu ms, cpu ratio. */
const coldRow = (name: string) =>
  new RegExp(`^ {2}${name.replace(/[()+.']/g, '\\$&')}\\s+\\d+\\.\\d\\s+\\d+-\\d+\\s+\\d+\\.\\d\\d\\s+\\d+\\.\\d\\s+\\d+\\.\\d\\d`, 'm');

describe('npm run bench (smoke: tiny rounds, the figures are not looked at)', () => {
  it('measures every case in both tables against bare XState of its own table, memory per session and cold start', async () => {
    const args = ['bench', '--rounds', '1', '--sessions', '20', '--warmup', '20', '--concurrency', '4', '--idle', '100', '--cold', '1'];
    const { stdout } = await run(process.execPath, cliArgs(...args), { cwd: REPO_DIR, timeout: 290_000 });
    const lines = stdout.split('\n');
    const sequential = lines.indexOf('one session at a time (wall µs = latency of a session):');
    const concurrent = lines.indexOf('4 sessions in flight (wall µs = elapsed time / sessions):');
    expect(sequential).toBeGreaterThan(-1);
    const memory = lines.findIndex((line) => line.startsWith('memory per session'));
    expect(concurrent).toBeGreaterThan(sequential);
    expect(memory).toBeGreaterThan(concurrent);
    const rows = (from: number, to: number) =>
      lines
        .slice(from, to)
        .map((line) => ROW.exec(line))
        .filter((m) => m !== null)
        .map((m) => ({ name: m[1]!.trim(), ratio: Number(m[3]) }));
    const first = rows(sequential, concurrent);
    const second = rows(concurrent, memory);
    // Redis is measured when a redis-server is installed (CI installs it), skipped with the reason otherwise.
    const redis = stdout.includes('(e) Flowing, Redis: skipped') ? [] : ['(e) Flowing, Redis'];
    expect(first.map((r) => r.name).sort()).toEqual(
      [
        '(a) hand-written async',
        '(b) bare XState',
        '(c) Flowing, memory store',
        '(d) Flowing, SQLite',
        ...redis,
        '(f) SQLite store alone',
      ].sort(),
    );
    expect(second.map((r) => r.name).sort()).toEqual(
      ['(b) bare XState', '(c) Flowing, memory store', '(d) Flowing, SQLite', ...redis, '(f) SQLite store alone'].sort(),
    );
    for (const row of [...first, ...second]) expect(row.ratio).toBeGreaterThan(0);
    expect(first.find((r) => r.name === '(b) bare XState')!.ratio).toBe(1);
    expect(second.find((r) => r.name === '(b) bare XState')!.ratio).toBe(1);
    expect(stdout).toMatch(/<= 1\.5x: (met|missed)/);

    // Memory per session: heap of new and one-turn sessions (all, without compiled code, ratio), then stored bytes.
    const heapRow = (name: string, target: string) =>
      new RegExp(`^ {2}${name.replace(/[()]/g, '\\$&')}\\s+(?:-?[\\d,]+\\s+-?[\\d,]+\\s+-?\\d+\\.\\d\\d\\s+){2}${target}$`, 'm');
    expect(stdout).toContain('memory per session, memory store: median of 1 rounds, each a new process keeping 100 sessions of each kind');
    expect(stdout).toMatch(heapRow('(b) bare XState', ''));
    expect(stdout).toMatch(heapRow('(c) Flowing, memory store', '<= 2500 B: (met|missed)'));
    expect(stdout).toMatch(/^ {2}\(b\) bare XState, persisted snapshot\s+[\d,]+ B\s+1\.00$/m);
    expect(stdout).toMatch(
      /^ {2}\(c\) Flowing, memory store, record \+ log \+ journal\s+[\d,]+ B\s+\d+\.\d\d {2}<= 4000 B: (met|missed)$/m,
    );
    expect(stdout).toMatch(
      /^ {6}record [\d,]+ B \(its XState snapshot [\d,]+ B\), log [\d,]+ B \(\d+ events\), journal [\d,]+ B \(\d+ calls\)$/m,
    );

    // Cold start: every case in new processes on the built runtime, then what the Flowing process imports.
    expect(stdout).toContain('cold start: median of 1 new processes per case');
    for (const name of ['node -e, nothing imported', '(b) bare XState', "(b') bare XState, tools with zod", '(c) Flowing, memory store'])
      expect(stdout).toMatch(coldRow(name));
    expect(stdout).toMatch(/^ {2}\(c\) Flowing, memory store .*<= 1\.3x: (met|missed)$/m);
    expect(stdout).toMatch(/^what the cold Flowing process imports: \d+ modules, \d+ KB/m);
    expect(stdout).toMatch(/^ {2}evaluating most: \S+\.js \d+\.\d/m);
    for (const name of ['zod', 'xstate', '@flowing/runtime', '@flowing/spec'])
      expect(stdout).toMatch(new RegExp(`^ {2}${name}\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+\\.\\d\\s+-?\\d+\\.\\d$`, 'm'));
    expect(stdout).toMatch(/^ {2}\s*\d+\.\d\s+\d+\s+\d+ {2}\S+\.js \(\S+\.js\)$/m);

    // A child session against the same calls inline (the machine-invoke overhead).
    expect(stdout).toMatch(/^ {2}inline compound state {2}\d+ µs per session$/m);
    expect(stdout).toMatch(/^ {2}child session {10}\d+ µs per session \(\+-?\d+ µs\)$/m);
  }, 300_000);

  it('refuses a bad option with BENCH_BAD_OPTION and exit code 2, measuring nothing', async () => {
    const failure = await run(process.execPath, cliArgs('bench', '--concurrency', '0'), { cwd: REPO_DIR, timeout: 30_000 }).catch(
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stdout: string }).stdout).toContain('error BENCH_BAD_OPTION: --concurrency must be a positive integer');
  });
});
