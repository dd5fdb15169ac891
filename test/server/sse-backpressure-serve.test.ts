import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { pausedStream } from './paused-client.ts';
import { readSse } from './sse-client.ts';

let dir: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-sse-lag-'));
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/**
 * `flowing serve` on a SQLite file of its own, with its URL and the JSON log lines it wrote to stderr. (Its RSS is
 * left to bin/bench/sse-paused-rss.ts: with a log of this size, garbage not yet collected varies more than the bound.)
 */
async function serve(args: string[]) {
  const child = spawn(
    process.execPath,
    cliArgs('serve', '--port', '0', '--no-rate-limit', '--store', `sqlite:${join(dir, `${children.length}.db`)}`, ...args),
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /http:\/\/[\d.]+:\d+/.exec(stdout);
      if (match) resolve(match[0]);
    });
    child.once('exit', (code) => reject(new Error(`flowing serve exited ${code}: ${stderr}`)));
  });
  const logs = () =>
    stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { code: string; [key: string]: unknown });
  return { url, logs };
}

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

const LAG_BYTES = 256 * 1024;
const QUESTION = 60 * 1024;
/** About 20 MB of log: several times what a paused loopback connection's kernel buffers hold. */
const TURNS = 160;

describe('flowing serve --max-stream-lag-bytes: paused clients of a chatty session', () => {
  it('cuts each paused client off with SSE_CLIENT_TOO_SLOW, and each resumes with every event exactly once, in order', async () => {
    const server = await serve(['--max-stream-lag-bytes', String(LAG_BYTES)]);
    const created = await post(`${server.url}/sessions`, { machine: 'order-support' });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;
    const clients = await Promise.all([0, 1, 2].map(() => pausedStream(`${server.url}/sessions/${id}/stream`)));

    for (let i = 0; i < TURNS; i++) {
      const sent = await post(`${server.url}/sessions/${id}/events`, {
        type: 'USER_MESSAGE',
        text: `question ${i} ${'q'.repeat(QUESTION)}`,
      });
      expect(sent.status).toBe(200);
    }
    const cutOff = await vi.waitFor(
      () => {
        const lines = server.logs().filter((line) => line.code === 'SSE_CLIENT_TOO_SLOW');
        expect(lines).toHaveLength(3);
        return lines;
      },
      { timeout: 30_000, interval: 50 },
    );
    for (const line of cutOff) {
      expect(line.sessionId).toBe(id);
      expect((line.lag as { bytes: number }).bytes).toBeLessThanOrEqual(LAG_BYTES + 2 * QUESTION + 4096);
    }
    const view = await (await fetch(`${server.url}/sessions/${id}`)).json();
    expect(view.status).toBe('waiting');
    const lastSeq = view.seq as number;
    let logBytes = 0;
    for (let after = 0; after < lastSeq; ) {
      const page = await (await fetch(`${server.url}/sessions/${id}/events?after=${after}&limit=500`)).json();
      for (const event of page.events) logBytes += JSON.stringify(event).length;
      after = page.events.at(-1).seq;
    }
    expect(logBytes).toBeGreaterThan(16 * 1024 * 1024);

    for (const client of clients) {
      const first = await client.resume();
      // What reached the client before its cut-off: the kernel buffers of the connection and the bounded queue.
      expect(first.bytes).toBeLessThan(logBytes / 2);
      const error = first.events.at(-1)!;
      expect(error.event).toBe('error');
      const received = first.events.filter((e) => e.id !== undefined);
      expect(JSON.parse(error.data)).toMatchObject({ code: 'SSE_CLIENT_TOO_SLOW', seq: Number(received.at(-1)!.id) });
      const rest = await readSse(`${server.url}/sessions/${id}/stream`, {
        headers: { 'last-event-id': received.at(-1)!.id! },
        until: (read) => read.events.some((e) => Number(e.id) === lastSeq),
      });
      expect([...received, ...rest.events].map((e) => Number(e.id))).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
    }
  }, 240_000);

  it('refuses a --max-stream-lag-bytes that is not a whole number of at least 1 with exit status 2', async () => {
    const child = spawn(process.execPath, cliArgs('serve', '--port', '0', '--max-stream-lag-bytes', '4MB'), {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("SERVER_BAD_MAX_STREAM_LAG: --max-stream-lag-bytes must be a whole number of bytes ≥ 1, not '4MB'");
  }, 60_000);
});
