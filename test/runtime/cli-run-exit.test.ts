import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../bin/run/run.ts';
import { cliArgs } from '../helpers/cli.ts';
import { copyProject, REPO_DIR } from '../helpers/project.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, options: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

/** Runs the real CLI from the sources in `cwd`; resolves with its exit code and output (killed after 20 s). */
function runCli(
  cwd: string,
  args: string[],
  options: { closeStdoutAfterFirstLine?: boolean } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(...args), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // Like `| head -1`: the reader goes away after the first line, and the writer's next write gets EPIPE.
      if (options.closeStdoutAfterFirstLine && stdout.includes('\n')) child.stdout.destroy();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let project: Awaited<ReturnType<typeof copyProject>>;
beforeAll(async () => {
  project = await copyProject('flowing-run-exit-');
  // Machines that fail the ways issue 8 found, placed where `flowing run` looks for machines.
  const helpers = join(REPO_DIR, 'test/helpers/runtime-failing-machines.ts');
  await mkdir(join(project.dir, 'machines/guarded-done'));
  await writeFile(
    join(project.dir, 'machines/guarded-done/guarded-done.machine.ts'),
    `import { guardedDoneMachine, quoteTool } from ${JSON.stringify(helpers)};\nexport const guardedDone = guardedDoneMachine(quoteTool().tool);\n`,
  );
  await mkdir(join(project.dir, 'machines/throwing-impl'));
  await writeFile(
    join(project.dir, 'machines/throwing-impl/throwing-impl.machine.ts'),
    `import { throwingImplMachine } from ${JSON.stringify(helpers)};\nexport const throwingImpl = throwingImplMachine({ initialGuard: true });\n`,
  );
  await mkdir(join(project.dir, 'machines/new-flow'));
  await writeFile(
    join(project.dir, 'machines/new-flow/new-flow.flow.json'),
    '{ "specVersion": 1, "id": "new-flow", "initial": "a", "states": { "a": {} } }\n',
  );
});
afterAll(async () => {
  await project?.remove();
});

describe('flowing run exit status and messages (issue 8)', () => {
  it('ends a run whose call result no branch takes with exit 1 and the reason, instead of exiting 13 silently', async () => {
    const events = join(project.dir, 'check.jsonl');
    await writeFile(events, '{"type":"CHECK","amount":500}\n{"type":"RESET"}\n');
    const { code, stdout, stderr } = await runCli(project.dir, ['run', 'guarded-done', '--events', events]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/transition\.rejected\s+xstate\.done\.actor\.checking refused: GUARD_REJECTED/);
    expect(stdout).toMatch(/session \S+ needs_attention/);
    expect(stderr).toContain('error RUN_EVENTS_REFUSED: 1 of 2 events were refused; first: event 2 (RESET): SESSION_NEEDS_ATTENTION');
    expect(stderr).toContain("error GUARD_REJECTED: the result of 'checking' matches no onDone branch");
  });

  it('reports a machine that throws while starting with its code and exit 1, showing the events it logged', async () => {
    const { code, stdout, stderr } = await runCli(project.dir, ['run', 'throwing-impl']);
    expect(code).toBe(1);
    expect(stdout).toMatch(/session\.started\s+throwing-impl/);
    expect(stdout).toMatch(/error\s+GUARD_THREW: guard 'isReady'/);
    expect(stderr).toMatch(/^error GUARD_THREW: guard 'isReady'.*isReady is not implemented yet/m);
  });

  it('exits quietly when the reader of --json output goes away (EPIPE), with no stack trace', async () => {
    const events = join(project.dir, 'many.jsonl');
    // Enough output to outlast the pipe's buffer, so the writer is still writing when the reader is gone.
    await writeFile(events, `${'{"type":"USER_MESSAGE","text":"hello there"}\n'.repeat(300)}`);
    const { code, stdout, stderr } = await runCli(project.dir, ['run', 'order-support', '--events', events, '--json'], {
      closeStdoutAfterFirstLine: true,
    });
    expect(JSON.parse(stdout.split('\n')[0]!)).toMatchObject({ seq: 1, type: 'session.started' });
    expect(stderr).not.toMatch(/EPIPE|Error:|\n\s+at /);
    expect(code).toBe(0);
  });

  it('says to run codegen only for a machine that has a spec but no generated code', async () => {
    const { code, stderr } = await runCli(project.dir, ['run', 'new-flow']);
    expect(code).toBe(2);
    expect(stderr).toContain(
      "error UNKNOWN_MACHINE: machine 'new-flow' has a spec (machines/new-flow/new-flow.flow.json) but no generated code; run `flowing codegen` first",
    );
  });
});

describe('flowing run in process', () => {
  it('exits 1 when any event of --events was refused, and 0 when every one applied', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowing-run-'));
    const refused = join(dir, 'refused.jsonl');
    await writeFile(refused, '{"type":"APPROVE"}\n{"type":"USER_MESSAGE","text":"where is my order A1001"}\n');
    const io = capture();
    expect(await runCommand('order-support', { events: refused, ...io.options })).toBe(1);
    expect(io.err).toEqual([
      expect.stringMatching(/^error RUN_EVENTS_REFUSED: 1 of 2 events were refused; first: event 1 \(APPROVE\): NO_TRANSITION/),
    ]);
    const fine = join(dir, 'fine.jsonl');
    await writeFile(fine, '{"type":"USER_MESSAGE","text":"where is my order A1001"}\n');
    const ok = capture();
    expect(await runCommand('order-support', { events: fine, ...ok.options })).toBe(0);
    expect(ok.err).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it('suggests the nearest machine ids for a typo, without telling to run codegen', async () => {
    const io = capture();
    expect(await runCommand('order-suport', io.options)).toBe(2);
    expect(io.err[0]).toBe(
      "error UNKNOWN_MACHINE: no machine 'order-suport' (looked for machines/order-suport/); did you mean 'order-support'?",
    );
    const far = capture();
    expect(await runCommand('zzz', far.options)).toBe(2);
    expect(far.err[0]).toMatch(/^error UNKNOWN_MACHINE: no machine 'zzz' .*; known machines: .*incident-triage.*order-support/);
    expect(far.err[0]).not.toContain('codegen');
  });
});

describe('flowing run --store and --session', () => {
  let dir: string;
  let redis: TestRedis | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowing-run-store-'));
  });
  afterAll(async () => {
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function approveLater(store: string) {
    const first = capture();
    expect(await runCommand('order-support', { store, message: 'I want a refund for A1002', ...first.options })).toBe(0);
    expect(first.out.some((l) => l.includes('approval.requested'))).toBe(true);
    expect(first.out.some((l) => /tool\.completed\s+issue_refund/.test(l))).toBe(false);
    const sessionId = /^session (\S+) waiting$/.exec(first.out.at(-1)!)![1]!;
    const approve = join(dir, 'approve.jsonl');
    await writeFile(approve, '{"type":"APPROVE"}\n');
    const later = capture();
    expect(await runCommand('order-support', { store, session: sessionId, events: approve, ...later.options })).toBe(0);
    expect(later.out.some((l) => /tool\.completed\s+issue_refund/.test(l))).toBe(true);
    // Only what happened in this run is printed: its first event follows the stored ones.
    expect(later.out[0]).not.toMatch(/session\.started/);
    expect(later.out.at(-1)).toBe(`session ${sessionId} waiting`);
    return sessionId;
  }

  it('keeps a session in SQLite so an approval can be given by a later run', async () => {
    await approveLater(`sqlite:${join(dir, 'sessions.db')}`);
  });

  it('keeps a session in Redis so an approval can be given by a later run', async () => {
    redis = await startRedis();
    await approveLater(redis.url);
  });

  it('refuses --session without a durable store, an unknown session, and a session of another machine (exit 2)', async () => {
    const store = `sqlite:${join(dir, 'sessions.db')}`;
    const memory = capture();
    expect(await runCommand('order-support', { session: 'x', ...memory.options })).toBe(2);
    expect(memory.err[0]).toMatch(/^error RUN_BAD_STORE: --session continues a stored session/);
    const unknown = capture();
    expect(await runCommand('order-support', { store, session: 'no-such-session', ...unknown.options })).toBe(2);
    expect(unknown.err[0]).toMatch(/^error SESSION_NOT_FOUND/);
    const sessionId = await approveLater(store);
    const other = capture();
    expect(await runCommand('incident-triage', { store, session: sessionId, ...other.options })).toBe(2);
    expect(other.err[0]).toBe(`error RUN_BAD_SESSION: session '${sessionId}' runs machine 'order-support', not 'incident-triage'`);
    const bad = capture();
    expect(await runCommand('order-support', { store: 'postgres://x', ...bad.options })).toBe(2);
    expect(bad.err[0]).toMatch(/^error RUN_BAD_STORE: --store 'postgres:\/\/x' is not a store/);
  });
});
