// S8 (RELIABILITY.md 4.3), scaled: connect/drop soak of `GET /sessions/:id/stream` on one server process in Redis
// mode. The plan says 10,000 cycles; this runs 2,000 (a fifth), 24 at a time, in 6-10 s on a shared 2-core machine
// (13-15 s with vitest start-up), after 300 warm-up cycles that are not counted. Each cycle opens a new TCP connection (no agent, no keep-alive) and
// drops it in one of six ways, in turn: before the response headers, right after them, after the first event of a
// full replay (the server is still writing the log), mid-stream while INC events are being POSTed to the session,
// after a resume with Last-Event-ID (the first event must be exactly the next seq), and on an idle stream after its
// first heartbeat. What the plan names and what it means for this store:
// - "Subscriber count (PUBSUB NUMSUB / CLIENT LIST)": the store uses neither Pub/Sub nor consumer groups; it follows
//   streams with XREAD BLOCK on one dedicated connection (runtime/store/redis/feed.ts). So: Redis `connected_clients`
//   and `blocked_clients` (INFO clients, with CLIENT LIST as evidence) back to the baseline exactly, and the store's
//   live follows (counted by wrapping the store's public `follow`: the feed has no counter of its own) back to 0.
// - "Pending entries for our groups = 0": no groups exist; instead XINFO GROUPS of every stream must be empty.
// - "Stream length <= trim bound": streams are not trimmed; instead XLEN of every session's stream = its seq (the
//   soak adds no entries of its own, and loses none).
// - "Open handles back to baseline (±0)": process.getActiveResourcesInfo() of this process (the server runs in the
//   test's process, so its sockets are ours too; all clients are closed before the check), plus the live intervals
//   counted as in load-server.ts, because getActiveResourcesInfo() leaves out unref'd timers like the SSE heartbeat.
// - "RSS after GC within +10% of baseline": as the plan says, after full GCs (gc exposed at run time with
//   v8.setFlagsFromString, since vitest's fork is not started with --expose-gc); heap used after GC is logged too.
import { request, type ClientRequest } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRuntime, type Runtime } from '@flowing/runtime';
import { createRedisStore, type RedisStore } from '@flowing/runtime/redis';
import { startServer, type RunningServer } from '@flowing/runtime/server';
import { countLiveIntervals } from '../helpers/live-intervals.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { parseSseResponse } from './sse-client.ts';
import { leaseCounterMachine } from './takeover-machines.ts';

const CYCLES = 2_000;
const WARMUP_CYCLES = 300;
const CONCURRENCY = 24;
const SESSIONS = 8;
const HEARTBEAT_MS = 100;
/** Every HTTP exchange of a cycle must end within this; a hung stream or request fails the test instead of hanging it. */
const CYCLE_TIMEOUT_MS = 10_000;
/** How long the server may take to notice the last drops before the counts must be exactly back at the baseline. */
const SETTLE_MS = 15_000;
/** The plan's bound: RSS after GC at most 10% over the baseline (taken after the warm-up, also after GC). */
const RSS_TOLERANCE = 0.1;

const KINDS = ['before-headers', 'after-headers', 'after-first-event', 'mid-stream-posting', 'resume', 'idle-heartbeat'] as const;
type Kind = (typeof KINDS)[number];

// Live intervals (see live-intervals.ts): a stream that kept its (unref'd) heartbeat after the drop shows here.
let intervals: ReturnType<typeof countLiveIntervals> | undefined;

function handles(): Record<string, number> {
  const counts: Record<string, number> = { Interval: intervals?.live() ?? 0 };
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
async function settledMemory(): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc();
  }
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heap: heapUsed };
}

let redis: TestRedis;
let admin: Redis;
let store: RedisStore;
let runtime: Runtime;
let server: RunningServer;
let port: number;
/** Store follows opened and not yet stopped (the runtime follows the store once per stream subscription). */
let liveFollows = 0;
/** Every client request not yet closed: destroyed in afterAll whatever happened. */
const openRequests = new Set<ClientRequest>();
/** Highest seq seen per session (a valid Last-Event-ID). */
const known = new Map<string, number>();
const sessionIds: string[] = [];
const failures: string[] = [];

beforeAll(async () => {
  intervals = countLiveIntervals();
  redis = await startRedis();
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  admin.on('error', () => {});
  await admin.connect();
  store = createRedisStore({ url: redis.url, prefix: 'soak:' });
  const follow = store.follow!.bind(store);
  store.follow = (sessionId, afterSeq, listener) => {
    const stop = follow(sessionId, afterSeq, listener);
    liveFollows++;
    let stopped = false;
    return () => {
      if (!stopped) liveFollows--;
      stopped = true;
      stop();
    };
  };
  runtime = createRuntime({ machines: [leaseCounterMachine], store, limits: { maxSteps: 100_000 } });
  // recover off: no periodic takeover scan, whose timer comes and goes, in the handle counts; nothing to recover here.
  server = await startServer(runtime, {
    port: 0,
    heartbeatMs: HEARTBEAT_MS,
    rateLimit: { client: false, session: false },
    recover: false,
    log: (entry) => {
      if (entry.level === 'error') failures.push(`server log: ${entry.code} ${entry.message}`);
    },
  });
  port = server.port;
  for (let i = 0; i < SESSIONS; i++) {
    const created = await httpJson('POST', '/sessions', { machine: 'lease-counter', sessionId: `soak-${i}` });
    expect(created.status).toBe(201);
    sessionIds.push(`soak-${i}`);
    known.set(`soak-${i}`, (created.body as { seq: number }).seq);
  }
}, 60_000);

afterAll(async () => {
  for (const req of openRequests) req.destroy();
  await server?.close();
  await store?.close();
  admin?.disconnect();
  await redis?.stop();
  intervals?.restore();
});

/** One JSON request on its own connection (no agent, so no idle keep-alive socket stays behind). */
function httpJson(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          connection: 'close',
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => done(undefined, { status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
      },
    );
    openRequests.add(req);
    const timer = setTimeout(() => done(new Error(`${method} ${path}: no answer within ${CYCLE_TIMEOUT_MS} ms`)), CYCLE_TIMEOUT_MS);
    let finished = false;
    function done(error?: Error, value?: { status: number; body: unknown }) {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      req.destroy();
      openRequests.delete(req);
      if (error) reject(error);
      else resolve(value!);
    }
    req.on('error', (error) => done(error));
    req.end(payload);
  });
}

/** One connect/drop cycle of `kind` on `sessionId`; resolves once its connection (and any POST) is closed. */
function cycle(kind: Kind, sessionId: string): Promise<void> {
  const latest = known.get(sessionId)!;
  // resume: any seq the session has passed, so the event after it is stored; idle: the latest, so nothing is due.
  const lastId =
    kind === 'resume'
      ? Math.floor(Math.random() * latest)
      : kind === 'idle-heartbeat' || kind === 'mid-stream-posting'
        ? latest
        : undefined;
  return new Promise<void>((resolve, reject) => {
    const posts: Array<Promise<{ status: number; body: unknown }>> = [];
    const seen: number[] = [];
    let finished = false;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/sessions/${sessionId}/stream`,
        agent: false,
        headers: { accept: 'text/event-stream', ...(lastId === undefined ? {} : { 'last-event-id': String(lastId) }) },
      },
      (res) => {
        if (res.statusCode !== 200) return done(new Error(`${kind} on ${sessionId}: status ${res.statusCode}`));
        if (kind === 'after-headers') return done();
        if (kind === 'mid-stream-posting') {
          for (let i = 0; i < 2; i++) posts.push(httpJson('POST', `/sessions/${sessionId}/events`, { type: 'INC' }));
        }
        // mid-stream: drop after the first or the second event (each INC logs one), with a POST still in flight or
        // just answered.
        const dropAfter = kind === 'mid-stream-posting' ? 1 + Math.floor(Math.random() * 2) : 1;
        let events = 0;
        parseSseResponse(res, {
          onEvent(event) {
            if (finished) return;
            const id = Number(event.id);
            known.set(sessionId, Math.max(known.get(sessionId)!, id));
            events++;
            seen.push(id);
            if (kind === 'resume' && events === 1 && id !== lastId! + 1) {
              return done(new Error(`resume of ${sessionId} after ${lastId}: first event ${id}, expected ${lastId! + 1}`));
            }
            if (kind !== 'idle-heartbeat' && events >= dropAfter) done();
          },
          onComment() {
            if (!finished && kind === 'idle-heartbeat') done();
          },
        });
        res.on('error', () => {});
      },
    );
    openRequests.add(req);
    const timer = setTimeout(
      () =>
        done(
          new Error(
            `${kind} on ${sessionId} (Last-Event-ID ${lastId}): not over within ${CYCLE_TIMEOUT_MS} ms; events seen ${seen.join(',')}`,
          ),
        ),
      CYCLE_TIMEOUT_MS,
    );
    function done(error?: Error) {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      req.destroy();
      openRequests.delete(req);
      Promise.all(posts).then(
        (answers) => {
          const bad = answers.find((a) => a.status !== 200);
          if (error) reject(error);
          else if (bad) reject(new Error(`INC to ${sessionId} answered ${bad.status}: ${JSON.stringify(bad.body)}`));
          else resolve();
        },
        (postError: unknown) => reject(error ?? postError),
      );
    }
    req.on('error', (error) => {
      // Our own destroy() after the drop reports a reset; anything before it is a failure.
      if (!finished) done(kind === 'before-headers' ? undefined : error);
    });
    // before-headers: the request is on the wire (flushed), then the connection goes before any answer.
    req.end(kind === 'before-headers' ? () => done() : undefined);
  });
}

/** Runs `count` cycles, `CONCURRENCY` at a time, the kinds in turn and the sessions spread over them. */
async function soak(count: number, offset: number): Promise<Record<Kind, number>> {
  const tally = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = offset + next++;
      const kind = KINDS[n % KINDS.length]!;
      tally[kind]++;
      await cycle(kind, sessionIds[Math.floor(n / KINDS.length) % SESSIONS]!);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return tally;
}

interface RedisClients {
  connected: number;
  blocked: number;
  list: string[];
}

async function redisClients(): Promise<RedisClients> {
  const info = await admin.info('clients');
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]);
  const list = ((await admin.client('LIST')) as string)
    .trim()
    .split('\n')
    .map((line) =>
      line
        .replace(
          /\b(id|addr|laddr|fd|age|idle|tot-mem|qbuf|qbuf-free|argv-mem|multi-mem|obl|oll|omem|events|user|redir|resp|rbs|rbp|ssub|sub|psub|db|lib-name|lib-ver|name|watch|io-thread)=\S*\s?/g,
          '',
        )
        .trim(),
    )
    .sort();
  return { connected: field('connected_clients'), blocked: field('blocked_clients'), list };
}

interface Observed {
  handles: Record<string, number>;
  redis: { connected: number; blocked: number };
  follows: number;
  openRequests: number;
}

async function observe(): Promise<Observed> {
  const clients = await redisClients();
  return {
    handles: handles(),
    redis: { connected: clients.connected, blocked: clients.blocked },
    follows: liveFollows,
    openRequests: openRequests.size,
  };
}

/**
 * `observe()` once it equals `baseline` (the server notices drops asynchronously), or as it is when the settle time
 * is over: the caller compares, so a count that never comes back fails there with both values.
 */
async function settle(baseline: Observed): Promise<Observed> {
  return vi
    .waitFor(
      async () => {
        const now = await observe();
        expect(now).toEqual(baseline);
        return now;
      },
      { timeout: SETTLE_MS, interval: 100 },
    )
    .catch(() => observe());
}

/**
 * The baseline: once the warm-up's drops are all noticed (no follow, no blocked XREAD) and the counts hold still for
 * half a second.
 */
async function quiet(): Promise<Observed> {
  const deadline = performance.now() + SETTLE_MS;
  let previous = await observe();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await observe();
    if (now.follows === 0 && now.redis.blocked === 0 && now.openRequests === 0 && JSON.stringify(now) === JSON.stringify(previous))
      return now;
    if (performance.now() > deadline) throw new Error(`no quiet baseline after the warm-up within ${SETTLE_MS} ms: ${JSON.stringify(now)}`);
    previous = now;
  }
}

describe('S8 (scaled): SSE connect/drop soak on one process, Redis store', () => {
  it(`${CYCLES} connect/drop cycles leave Redis clients, follows and handles at the baseline and RSS within +10%`, async () => {
    // Warm-up: the feed's XREAD connection exists from the first follow on, and V8 compiles the hot paths.
    await soak(WARMUP_CYCLES, 0);
    const baseline = await quiet();
    const baselineList = (await redisClients()).list;
    const memoryBefore = await settledMemory();

    const started = performance.now();
    const tally = await soak(CYCLES, WARMUP_CYCLES);
    const seconds = (performance.now() - started) / 1000;
    const after = await settle(baseline);
    const afterList = (await redisClients()).list;
    const memoryAfter = await settledMemory();

    // The log of every session: one stream entry per event, exactly, and no consumer group anywhere.
    const streams: Array<{ id: string; xlen: number; seq: number; groups: number }> = [];
    for (const id of sessionIds) {
      const view = await httpJson('GET', `/sessions/${id}`);
      const key = `soak:{${id}}:e`;
      streams.push({
        id,
        xlen: await admin.xlen(key),
        seq: (view.body as { seq: number }).seq,
        groups: ((await admin.xinfo('GROUPS', key)) as unknown[]).length,
      });
    }
    const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
    console.info(
      `S8 (scaled from 10,000): ${CYCLES} cycles ${JSON.stringify(tally)} at ${CONCURRENCY} at once in ${seconds.toFixed(1)} s; ` +
        `redis clients ${baseline.redis.connected} -> ${after.redis.connected} (blocked ${baseline.redis.blocked} -> ${after.redis.blocked}); ` +
        `follows ${baseline.follows} -> ${after.follows}; handles ${JSON.stringify(baseline.handles)} -> ${JSON.stringify(after.handles)}; ` +
        `RSS after GC ${mb(memoryBefore.rss)} -> ${mb(memoryAfter.rss)} MB; heap after GC ${mb(memoryBefore.heap)} -> ${mb(memoryAfter.heap)} MB; ` +
        `events per session ${streams.map((s) => s.seq).join(',')}`,
    );

    expect(failures).toEqual([]);
    expect(after).toEqual(baseline);
    expect(afterList).toEqual(baselineList);
    for (const s of streams) expect(s).toEqual({ id: s.id, xlen: s.seq, seq: s.seq, groups: 0 });
    expect(memoryAfter.rss).toBeLessThanOrEqual(memoryBefore.rss * (1 + RSS_TOLERANCE));
  }, 120_000);
});
