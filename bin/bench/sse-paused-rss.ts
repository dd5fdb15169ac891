import { request, type ClientRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServe } from './serve-process.ts';

/**
 * RSS growth of a `flowing serve` process (SQLite) while `CLIENTS` SSE clients of one order-support session stop
 * reading (their responses paused) and the session logs about `MB` megabytes of questions (60 KB each). Each
 * client's stream is what the server must hold for it; with maxStreamLag it holds at most the bound and cuts the
 * client off. `CLI=<path to bin/cli.ts>` serves with another checkout (run from its folder), for a before/after.
 * `node --conditions=@flowing/source --import tsx bin/bench/sse-paused-rss.ts`
 */
async function main() {
  const megabytes = Number(process.env.MB ?? 16);
  const clients = Number(process.env.CLIENTS ?? 4);
  const lagBytes = process.env.LAG_BYTES;
  const dir = await mkdtemp(join(tmpdir(), 'flowing-sse-paused-'));
  const cli = process.env.CLI ? resolve(process.env.CLI) : undefined;
  const args = ['--store', `sqlite:${join(dir, 'sessions.db')}`, ...(lagBytes ? ['--max-stream-lag-bytes', lagBytes] : [])];
  const server = await startServe(args, cli ? { cli, cwd: resolve(cli, '../..') } : {});
  const requests: ClientRequest[] = [];
  try {
    const created = await post(`${server.url}/sessions`, { machine: 'order-support' });
    const id = created.sessionId as string;
    for (let i = 0; i < clients; i++) requests.push(await pausedClient(`${server.url}/sessions/${id}/stream`));
    const baseline = server.rss()!;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, server.rss() ?? 0)), 20);
    const question = 60 * 1024;
    const turns = Math.ceil((megabytes * 1024 * 1024) / question);
    const started = performance.now();
    for (let i = 0; i < turns; i++) {
      await post(`${server.url}/sessions/${id}/events`, { type: 'USER_MESSAGE', text: `question ${i} ${'q'.repeat(question)}` });
    }
    const seconds = (performance.now() - started) / 1000;
    const log = await logBytes(server.url, id);
    // What is still on its way to the paused clients settles within a moment; the bench may wait, a test may not.
    await new Promise((done) => setTimeout(done, 2_000));
    clearInterval(sampler);
    const after = server.rss()!;
    peak = Math.max(peak, after);
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    console.log(
      `${clients} paused SSE clients, ${turns} turns in ${seconds.toFixed(1)} s (log ${mb(log)}): RSS ${mb(baseline)} before, ` +
        `peak ${mb(peak)} (+${mb(peak - baseline)}), ${mb(after)} after (+${mb(after - baseline)})`,
    );
  } finally {
    for (const req of requests) req.destroy();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return answer;
}

/** An SSE request whose response is paused as soon as its headers arrive: the client reads nothing more. */
function pausedClient(url: string): Promise<ClientRequest> {
  return new Promise((resolveClient, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream' } }, (response) => {
      response.pause();
      resolveClient(req);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Bytes of the session's log as JSON, read page by page. */
async function logBytes(url: string, id: string): Promise<number> {
  let bytes = 0;
  let after = 0;
  for (;;) {
    const page = (await (await fetch(`${url}/sessions/${id}/events?after=${after}&limit=500`)).json()) as {
      events: Array<{ seq: number }>;
    };
    if (page.events.length === 0) return bytes;
    for (const event of page.events) bytes += JSON.stringify(event).length;
    after = page.events.at(-1)!.seq;
  }
}

await main();
