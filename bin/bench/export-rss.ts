import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRuntime, type RuntimeEvent, type SessionRecord } from '@flowing/runtime';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { loadMachine } from '../run/load.ts';
import { benchProvider } from './model.ts';
import { startServe } from './serve-process.ts';

// Loaded like `flowing run` loads it (from the project's machines/), so the CLI build never compiles a machine.
const orderSupport = await loadMachine('order-support');

/**
 * RSS of a `flowing serve` process while 6 clients export one 100 MB session at once (SQLite). The session is one
 * real order-support session whose turn (a 20 KB question) is written again with later seqs until its log holds
 * `MB` megabytes. `CLI=<path to bin/cli.ts>` serves with another checkout (run from its folder), for a before/after.
 * `node --conditions=@flowing/source --import tsx bin/bench/export-rss.ts`
 */
async function main() {
  const megabytes = Number(process.env.MB ?? 100);
  const clients = Number(process.env.CLIENTS ?? 6);
  const dir = await mkdtemp(join(tmpdir(), 'flowing-export-rss-'));
  const file = join(dir, 'sessions.db');
  const sessionId = await buildSession(file, megabytes * 1024 * 1024);
  const cli = process.env.CLI ? resolve(process.env.CLI) : undefined;
  const server = await startServe(['--store', `sqlite:${file}`], cli ? { cli, cwd: resolve(cli, '../..') } : {});
  try {
    const exportOnce = async () => {
      const response = await fetch(`${server.url}/sessions/${sessionId}/export`);
      if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
      let bytes = 0;
      for await (const chunk of response.body!) bytes += (chunk as Uint8Array).byteLength;
      return bytes;
    };
    await fetch(`${server.url}/sessions/${sessionId}`);
    const baseline = server.rss()!;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, server.rss() ?? 0)), 20);
    const started = performance.now();
    const sizes = await Promise.all(Array.from({ length: clients }, exportOnce));
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, server.rss() ?? 0);
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    console.log(
      `${clients} concurrent exports of a ${mb(sizes[0]!)} session in ${seconds.toFixed(1)} s: RSS ${mb(baseline)} before, peak ${mb(peak)}, added ${mb(peak - baseline)}`,
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A stored order-support session whose log holds about `bytes` bytes of JSON; its id. */
async function buildSession(file: string, bytes: number): Promise<string> {
  const store = createSqliteStore({ file });
  const runtime = createRuntime({ machines: [orderSupport], store, llm: benchProvider(), limits: { maxLogBytes: 4 * bytes } });
  const session = await runtime.createSession(orderSupport);
  const first = (await store.load(session.id))!.seq;
  await session.send({ type: 'USER_MESSAGE', text: `where is my order A1001? ${'q'.repeat(20 * 1024)}` });
  let record: SessionRecord = (await store.load(session.id))!;
  const turn = (await store.readEvents(session.id, first)).filter((e) => e.seq > first);
  const turnBytes = turn.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
  let logged = turnBytes;
  while (logged < bytes) {
    const events: RuntimeEvent[] = [];
    while (events.length < 2_000 && logged < bytes) {
      for (const event of turn) events.push({ ...event, seq: record.seq + events.length + 1 });
      logged += turnBytes;
    }
    const next: SessionRecord = { ...record, version: record.version + 1, seq: record.seq + events.length };
    await store.commit({ expectedVersion: record.version, record: next, events, journal: [] });
    record = next;
  }
  await store.close();
  if (!existsSync(file)) throw new Error('no store file');
  return session.id;
}

await main();
