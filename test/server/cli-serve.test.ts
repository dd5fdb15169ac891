import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { startRedis } from '../helpers/redis.ts';
import { followSse, readSse } from './sse-client.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-serve-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `flowing serve` in `dir` and waits for the line with its URL. */
async function startServe(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string; stdout: () => string; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, cliArgs('serve', '--port', '0', ...args), {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /http:\/\/[\d.]+:\d+/.exec(stdout);
      if (match) resolve(match[0]);
    });
    void exited.then((code) => reject(new Error(`flowing serve exited ${code}: ${stderr}`)));
  });
  return { child, url, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The first line of the child's stdout matching `pattern`, waiting for more output until it comes or the child ends. */
function lineOf(served: { child: ChildProcess; stdout: () => string; exited: Promise<number | null> }, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const look = () => {
      const line = served
        .stdout()
        .split('\n')
        .find((l) => pattern.test(l));
      if (line === undefined) return false;
      served.child.stdout!.off('data', look);
      resolve(line);
      return true;
    };
    if (look()) return;
    served.child.stdout!.on('data', look);
    void served.exited.then(() => reject(new Error(`no line matching ${pattern} in: ${served.stdout()}`)));
  });
}

/** `/readyz` once the server has recovered the sessions a previous one left (as a load balancer polls it). */
async function readyz(url: string): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${url}/readyz`);
    const body = await response.json();
    if (response.status !== 503 || attempt >= 100) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function runCli(...args: string[]) {
  return spawnSync(process.execPath, cliArgs(...args), { cwd: dir, encoding: 'utf8', timeout: 30_000 });
}

describe('flowing serve and flowing sessions', () => {
  it('serves the project machines on 127.0.0.1 with SQLite in .flowing/ and stops on SIGTERM with 0', async () => {
    const served = await startServe([]);
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
      const machines = await (await fetch(`${served.url}/machines`)).json();
      expect(machines.machines.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining(['order-support']));
      expect(machines.machines.find((m: { id: string }) => m.id === 'order-support').spec.id).toBe('order-support');
      const created = await (
        await fetch(`${served.url}/sessions`, { method: 'POST', body: JSON.stringify({ machine: 'order-support' }) })
      ).json();
      const sent = await fetch(`${served.url}/sessions/${created.sessionId}/events`, {
        method: 'POST',
        body: JSON.stringify({ type: 'CANCEL' }),
      });
      expect(sent.status).toBe(200);
      await (await fetch(`${served.url}/sessions`, { method: 'POST', body: JSON.stringify({ machine: 'order-support' }) })).json();
    } finally {
      served.child.kill('SIGTERM');
    }
    expect(await served.exited).toBe(0);
  }, 60_000);

  it('D12: says at start and on /readyz what an acknowledged commit survives: SQLite, Redis without and with an append-only file', async () => {
    const expectations: Array<{ store: string[]; summary: RegExp }> = [
      {
        store: [],
        summary: /^flowing serve: SQLite durability: WAL, synchronous=FULL \(every commit fsynced before it is acknowledged\)$/,
      },
    ];
    const plain = await startRedis();
    const aofDir = await mkdtemp(join(tmpdir(), 'flowing-serve-aof-'));
    const aof = await startRedis(['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], { dir: aofDir });
    expectations.push(
      {
        store: ['--store', plain.url],
        summary: /^flowing serve: Redis durability: no persistence \(no RDB snapshots, no append-only file/,
      },
      { store: ['--store', aof.url], summary: /^flowing serve: Redis durability: append-only file, fsync always$/ },
    );
    try {
      for (const { store, summary } of expectations) {
        const served = await startServe(store);
        try {
          const line = await lineOf(served, /durability/);
          expect(line).toMatch(summary);
          expect(await readyz(served.url)).toMatchObject({ ok: true, durability: line.slice('flowing serve: '.length) });
        } finally {
          served.child.kill('SIGTERM');
          await served.exited;
        }
      }
    } finally {
      await plain.stop();
      await aof.stop();
      await rm(aofDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('lists the stored sessions, filtered by status, as JSON lines or a table', () => {
    const all = runCli('sessions', '--json');
    expect(all.status).toBe(0);
    const listed = all.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(listed).toHaveLength(2);
    const done = runCli('sessions', '--status', 'done', '--json');
    expect(
      done.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).status),
    ).toEqual(['done']);
    const table = runCli('sessions', '--status', 'waiting');
    expect(table.stdout).toMatch(/order-support {2}waiting/);
    expect(table.stdout).toMatch(/1 session\(s\)/);
  }, 60_000);

  it('refuses a non-loopback host without FLOWING_TOKEN with exit 2 and SERVER_TOKEN_REQUIRED', () => {
    const env = { ...process.env };
    delete env.FLOWING_TOKEN;
    const result = spawnSync(process.execPath, cliArgs('serve', '--port', '0', '--host', '0.0.0.0', '--store', 'memory'), {
      cwd: dir,
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('SERVER_TOKEN_REQUIRED');
  });

  it('requires the FLOWING_TOKEN bearer token when one is set, and never prints it', async () => {
    const token = 'cli-token-0123456789abcdef';
    const served = await startServe(['--store', 'memory'], { FLOWING_TOKEN: token });
    try {
      expect((await fetch(`${served.url}/machines`)).status).toBe(401);
      expect((await fetch(`${served.url}/machines`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      served.child.kill('SIGTERM');
    }
    await served.exited;
    expect(served.stderr()).not.toContain(token);
  });

  it('refuses an unknown store and an unknown status with exit 2 and a code', () => {
    const store = runCli('sessions', '--store', 'postgres://x');
    expect(store.status).toBe(2);
    expect(store.stderr).toContain('RUN_BAD_STORE');
    const status = runCli('sessions', '--status', 'sleeping');
    expect(status.status).toBe(2);
    expect(status.stderr).toContain('SESSIONS_BAD_STATUS');
  }, 60_000);

  it('continues a stream exactly after Last-Event-ID when the server was SIGKILLed mid-stream and restarted on the same SQLite file', async () => {
    const first = await startServe(['--store', 'sqlite:kill.db']);
    const id = (await (await fetch(`${first.url}/sessions`, { method: 'POST', body: JSON.stringify({ machine: 'order-support' }) })).json())
      .sessionId;
    for (const text of ['hello there', 'where is my order A1001']) {
      await fetch(`${first.url}/sessions/${id}/events`, { method: 'POST', body: JSON.stringify({ type: 'USER_MESSAGE', text }) });
    }
    const seenBefore = await readSse(`${first.url}/sessions/${id}/stream`, {
      until: (r) => {
        if (r.events.length >= 3) first.child.kill('SIGKILL');
        return false;
      },
    });
    await first.exited;
    expect(seenBefore.complete).toBe(false);
    expect(seenBefore.events.length).toBeGreaterThanOrEqual(3);

    const second = await startServe(['--store', 'sqlite:kill.db']);
    try {
      const lastSeen = seenBefore.events.at(-1)!.id!;
      const following = followSse(`${second.url}/sessions/${id}/stream`, { headers: { 'last-event-id': lastSeen } });
      await fetch(`${second.url}/sessions/${id}/events`, { method: 'POST', body: JSON.stringify({ type: 'CANCEL' }) });
      const { events: after } = await following;
      const log = (await (await fetch(`${second.url}/sessions/${id}/events`)).json()).events as Array<{ seq: number; type: string }>;
      expect([...seenBefore.events, ...after].map((e) => Number(e.id))).toEqual(log.map((e) => e.seq));
      expect(log.map((e) => e.seq)).toEqual(log.map((_e, i) => i + 1));
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 90_000);
});
