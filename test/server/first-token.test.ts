import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { reply, startFakeOpenAI, streamed, type FakeOpenAI } from '../helpers/fake-openai.ts';
import { parseSseResponse } from './sse-client.ts';

const ROUNDS = 15;

let dir: string;
let fake: FakeOpenAI;
let served: { child: ChildProcess; url: string; exited: Promise<number | null> };
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-first-token-'));
  fake = await startFakeOpenAI();
  const child = spawn(process.execPath, cliArgs('serve', '--port', '0', '--store', 'memory'), {
    cwd: dir,
    env: { ...process.env, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test-key', FLOWING_MODEL: 'fake-model' },
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
  served = { child, url, exited };
}, 60_000);
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  await fake?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Opens the session's SSE stream; resolves once the response headers are in, with a way to wait for an event. */
function openStream(url: string) {
  const seen: Array<{ type: string; at: number }> = [];
  const waiters: Array<() => void> = [];
  return new Promise<{ firstAt(type: string, where?: (data: any) => boolean): Promise<number>; close(): void }>((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream' } }, (res) => {
      const data = new Map<number, unknown>();
      parseSseResponse(res, {
        onEvent: (event) => {
          const at = performance.now();
          seen.push({ type: event.event ?? '', at });
          data.set(seen.length - 1, JSON.parse(event.data).data);
          for (const wake of waiters.splice(0)) wake();
        },
      });
      resolve({
        firstAt: (type, where = () => true) =>
          new Promise<number>((done) => {
            const look = () => {
              const index = seen.findIndex((e, i) => e.type === type && where(data.get(i)));
              if (index >= 0) done(seen[index]!.at);
              else waiters.push(look);
            };
            look();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('first streamed token through flowing serve (SSE), against a model that streams at once', () => {
  it(`measures the p50 over ${ROUNDS} rounds`, async () => {
    const fromPost: number[] = [];
    const fromCall: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // order-support: "hello" is classified as other, and small_talk streams its reply.
      fake.enqueue(reply('{"label":"other"}'), streamed(['Hi', ' there', ', how can I help?']));
      const created = await (
        await fetch(`${served.url}/sessions`, { method: 'POST', body: JSON.stringify({ machine: 'order-support' }) })
      ).json();
      const stream = await openStream(`${served.url}/sessions/${created.sessionId}/stream`);
      const posted = performance.now();
      const sent = await fetch(`${served.url}/sessions/${created.sessionId}/events`, {
        method: 'POST',
        body: JSON.stringify({ type: 'USER_MESSAGE', text: 'hello' }),
      });
      expect(sent.status).toBe(200);
      const firstDelta = await stream.firstAt('message.delta');
      const generateStarted = await stream.firstAt('llm.started', (d) => d.kind === 'generate');
      stream.close();
      fromPost.push(firstDelta - posted);
      fromCall.push(firstDelta - generateStarted);
    }
    const p50Post = median(fromPost);
    const p50Call = median(fromCall);
    console.log(
      `first streamed token over SSE, p50 of ${ROUNDS} rounds: ${p50Post.toFixed(1)} ms from the POST (a classify call included), ${p50Call.toFixed(1)} ms from the generate call's llm.started`,
    );
    expect(fake.pending()).toBe(0);
    expect(p50Call).toBeLessThan(1_000);
  }, 120_000);
});
