import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';

let dir: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-serve-limits-'));
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** Starts `flowing serve` with `args` on a SQLite file of its own and answers its URL. */
async function serve(args: string[]): Promise<string> {
  const child = spawn(
    process.execPath,
    cliArgs('serve', '--port', '0', '--no-rate-limit', '--store', `sqlite:${join(dir, `${children.length}.db`)}`, ...args),
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /http:\/\/[\d.]+:\d+/.exec(stdout);
      if (match) resolve(match[0]);
    });
    child.once('exit', (code) => reject(new Error(`flowing serve exited ${code}: ${stderr}`)));
  });
}

async function post(url: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

describe('flowing serve --steps-per-turn and --max-log-bytes', () => {
  it('refuses a turn longer than --steps-per-turn with 409 STEP_LIMIT and takes the next event', async () => {
    const url = await serve(['--steps-per-turn', '4']);
    const created = await post(url, '/sessions', { machine: 'order-support' });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;
    const refused = await post(url, `/sessions/${id}/events`, { type: 'USER_MESSAGE', text: 'where is my order A1001' });
    expect(refused).toMatchObject({ status: 409, body: { code: 'STEP_LIMIT' } });
    const view = await (await fetch(`${url}/sessions/${id}`)).json();
    expect(view).toMatchObject({ status: 'waiting' });
    expect(await post(url, `/sessions/${id}/events`, { type: 'USER_MESSAGE', text: 'hello' })).toMatchObject({ status: 200 });
  });

  it('refuses events past --max-log-bytes with 409 SESSION_LOG_FULL naming the session and the quota', async () => {
    const url = await serve(['--max-log-bytes', '8000']);
    const id = (await post(url, '/sessions', { machine: 'order-support' })).body.sessionId as string;
    let last: { status: number; body: any } | undefined;
    for (let i = 0; i < 20; i++) {
      last = await post(url, `/sessions/${id}/events`, { type: 'USER_MESSAGE', text: `hello ${i} ${'h'.repeat(500)}` });
      if (last.status !== 200) break;
    }
    expect(last).toMatchObject({ status: 409, body: { code: 'SESSION_LOG_FULL', details: { sessionId: id, maxLogBytes: 8000 } } });
    expect(last!.body.message).toContain(`session '${id}'`);
  });

  it('refuses a flag that is not a whole number of at least 1 with exit status 2', async () => {
    const child = spawn(process.execPath, cliArgs('serve', '--port', '0', '--steps-per-turn', 'many'), {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("SERVER_BAD_STEPS_PER_TURN: --steps-per-turn must be a whole number of steps ≥ 1, not 'many'");
  });
});
