import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { JsonClient } from './http-client.ts';
import { runLoad, type LoadReport } from './load.ts';
import { startBenchRedis } from './redis-server.ts';
import { startServe } from './serve-process.ts';

const USAGE =
  'usage: npm run bench:serve -- [--sessions 1000] [--events 10] [--concurrency 64] [--store sqlite,redis] [--redis redis://HOST:PORT]';

function positive(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} must be a positive integer, not '${text}'`);
  return value;
}

/**
 * `npm run bench:serve`: `sessions` concurrent order-support sessions x `events` messages over loopback HTTP (one
 * keep-alive agent, `concurrency` requests in flight) against a `flowing serve` child process, once with SQLite (a
 * temporary file) and once with Redis (`--redis URL`, or a redis-server of its own; skipped with the reason when
 * there is none). Prints events/s, p50/p99 latency, errors and lost events per store; exit 1 when any run had an
 * error or lost an event, 2 for bad options.
 */
export async function benchServe(
  argv: readonly string[],
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  let sessions: number, events: number, concurrency: number, stores: string[], redisOption: string | undefined;
  try {
    const { values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        sessions: { type: 'string', default: '1000' },
        events: { type: 'string', default: '10' },
        concurrency: { type: 'string', default: '64' },
        store: { type: 'string', default: 'sqlite,redis' },
        redis: { type: 'string' },
      },
    });
    sessions = positive(values.sessions, 'sessions');
    events = positive(values.events, 'events');
    concurrency = positive(values.concurrency, 'concurrency');
    stores = values.store.split(',').map((s) => s.trim());
    const unknown = stores.filter((s) => s !== 'sqlite' && s !== 'redis');
    if (unknown.length > 0) throw new RangeError(`--store takes sqlite and/or redis, not ${unknown.join(', ')}`);
    redisOption = values.redis;
  } catch (error) {
    out(`error BENCH_BAD_OPTION: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  out(
    `bench:serve: order-support, ${sessions} concurrent sessions x ${events} USER_MESSAGE events (each: classify, extract, 3 tools, generate)`,
  );
  out(
    `loopback HTTP, one keep-alive agent, ${concurrency} requests in flight; flowing serve in a child process, scripted model; node ${process.version}`,
  );
  out(
    `  ${'store'.padEnd(8)} ${'events/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'errors'.padStart(7)} ${'lost'.padStart(5)} ${'creates/s'.padStart(10)} ${'server peak RSS'.padStart(16)}`,
  );
  let failed = false;
  for (const store of stores) {
    const dir = mkdtempSync(join(tmpdir(), 'flowing-bench-serve-'));
    let stopRedis = async () => {};
    try {
      let storeArg = `sqlite:${join(dir, 'sessions.db')}`;
      if (store === 'redis') {
        if (redisOption) storeArg = redisOption;
        else {
          const redis = await startBenchRedis();
          if (typeof redis === 'string') {
            out(`  ${'redis'.padEnd(8)} skipped: ${redis}`);
            continue;
          }
          storeArg = redis.url;
          stopRedis = redis.stop;
        }
      }
      const server = await startServe(['--store', storeArg]);
      const client = new JsonClient(server.url, concurrency);
      try {
        // A short untimed run first, so the server's code is optimised before the timed one.
        await runLoad(client, { sessions: Math.min(100, sessions), events: 2, concurrency, idPrefix: `warm-${store}` });
        const report = await runLoad(client, { sessions, events, concurrency, idPrefix: `bench-${store}` });
        out(formatRow(store, report, server.peakRss()));
        for (const sample of report.samples) out(`      ${sample}`);
        if (report.errors > 0 || report.lost > 0) failed = true;
      } finally {
        client.close();
        await server.stop();
      }
    } catch (error) {
      out(`  ${store.padEnd(8)} failed: ${(error as Error).message}`);
      failed = true;
    } finally {
      await stopRedis();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return failed ? 1 : 0;
}

function formatRow(store: string, r: LoadReport, rss: number | undefined): string {
  const mb = rss === undefined ? 'n/a' : `${(rss / 2 ** 20).toFixed(0)} MB`;
  return `  ${store.padEnd(8)} ${r.eventsPerSecond.toFixed(0).padStart(9)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${r.max.toFixed(0).padStart(8)} ${String(r.errors).padStart(7)} ${String(r.lost).padStart(5)} ${r.createPerSecond.toFixed(0).padStart(10)} ${mb.padStart(16)}`;
}
