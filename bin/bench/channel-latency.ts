/**
 * Channel delivery latency: 1,000 messages from sender sessions to receiver sessions, from `channel.sent` (logged in
 * the sender's step, just before that step's commit) to `channel.received` (logged by the receiver right after the
 * step that applied the message is stored), in ms. Three shapes in one run, interleaved per round:
 * - `two processes, Redis`: the sender runtime here, the receiving runtime in a child process, one Redis (the
 *   commit appends to the channel stream; the child consumes it in its consumer group);
 * - `one process, Redis`: one runtime serving both machines, the same stream path;
 * - `one process, memory`: in-process delivery after the commit.
 * Four sender sessions send concurrently, each its messages one after the other, to ten receiving sessions.
 * Prints p50/p99 per round and the medians over the rounds.
 *
 *   node --conditions=@flowing/source --import tsx bin/bench/channel-latency.ts [messages=1000] [rounds=3] [--redis URL]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMemoryStore, createRuntime, type AnyMachineDefinition, type Runtime, type SessionStore } from '@flowing/runtime';
import { createRedisStore } from '@flowing/runtime/redis';
import { benchReceiver, benchSender } from './channel-machines.ts';
import { startBenchRedis } from './redis-server.ts';
import { median, percentile } from './stats.ts';

const SENDERS = 4;
const KEYS = 10;
const WARM_UP = 100;

if (process.argv[2] === 'receiver') {
  // The receiving process: consumes until told to stop.
  const [, , , url, prefix] = process.argv;
  const store = createRedisStore({ url: url!, prefix: prefix! });
  const runtime = createRuntime({ machines: [benchReceiver], store });
  process.stdout.write('READY\n');
  process.once('SIGTERM', () => {
    void runtime.channels!.stop().then(() => store.close().then(() => process.exit(0)));
  });
} else {
  await main();
}

async function main() {
  const args = process.argv.slice(2);
  const redisAt = args.indexOf('--redis');
  const givenUrl = redisAt >= 0 ? args.splice(redisAt, 2)[1] : undefined;
  const messages = Number(args[0] ?? 1000);
  const rounds = Number(args[1] ?? 3);
  let url = givenUrl;
  let stopRedis = async () => {};
  if (!url) {
    const started = await startBenchRedis();
    if (typeof started === 'string') throw new Error(started);
    url = started.url;
    stopRedis = started.stop;
  }
  const shapes = ['two processes, Redis', 'one process, Redis', 'one process, memory'] as const;
  const pacings = ['paced', 'burst'] as const;
  const label = (shape: string, pacing: Pacing) => `${pacing} ${shape}`;
  const results = new Map<string, Array<{ p50: number; p99: number }>>();
  const backlogRates: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const rate = await backlogRate(url, `bench-channels-${process.pid}-${round}-backlog:`, messages);
    backlogRates.push(rate);
    console.log(`round ${round} backlog: a receiving process started after ${messages} messages were stored applies ${rate.toFixed(0)}/s`);
    for (const pacing of pacings) {
      for (const shape of shapes) {
        const prefix = `bench-channels-${process.pid}-${round}-${pacing}-${shape.replace(/\W+/g, '-')}:`;
        const latencies = await measure(shape, pacing, url, prefix, messages);
        const row = { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
        results.set(label(shape, pacing), [...(results.get(label(shape, pacing)) ?? []), row]);
        console.log(
          `round ${round} ${label(shape, pacing).padEnd(28)} p50 ${row.p50.toFixed(1)} ms  p99 ${row.p99.toFixed(1)} ms  (${latencies.length} messages)`,
        );
      }
    }
  }
  console.log(`\nmedians over ${rounds} rounds, ${messages} messages each (${SENDERS} senders, ${KEYS} receiving sessions):`);
  for (const pacing of pacings) {
    const base = median(results.get(label('one process, Redis', pacing))!.map((r) => r.p50));
    for (const shape of shapes) {
      const rows = results.get(label(shape, pacing))!;
      const p50 = median(rows.map((r) => r.p50));
      const p99 = median(rows.map((r) => r.p99));
      console.log(
        `  ${label(shape, pacing).padEnd(28)} p50 ${p50.toFixed(1)} ms  p99 ${p99.toFixed(1)} ms  p50 ÷ one-process Redis p50: ${(p50 / base).toFixed(2)}`,
      );
    }
  }
  console.log(`  backlog applied by one receiving process: ${median(backlogRates).toFixed(0)} messages/s`);
  await stopRedis();
}

/** Sends `count` messages in one shape and answers the latency of each, in ms. */
async function measure(shape: string, pacing: Pacing, url: string, prefix: string, count: number): Promise<number[]> {
  let receiver: ChildProcess | undefined;
  let store: SessionStore;
  let served: AnyMachineDefinition[];
  if (shape === 'one process, memory') {
    store = createMemoryStore();
    served = [benchSender, benchReceiver];
  } else {
    store = createRedisStore({ url, prefix });
    served = shape === 'one process, Redis' ? [benchSender, benchReceiver] : [benchSender];
    if (shape === 'two processes, Redis') receiver = await startReceiver(url, prefix);
  }
  const runtime = createRuntime({ machines: served, store });
  // Not measured: the first messages create the receiving sessions and warm both processes up.
  await sendAll(runtime, 'warm', WARM_UP, store, 'burst');
  const latencies = await sendAll(runtime, 'k', count, store, pacing);
  await runtime.channels?.stop();
  if (receiver) {
    receiver.kill('SIGTERM');
    await new Promise((resolve) => receiver.once('exit', resolve));
  }
  await store.close?.();
  return latencies;
}

/**
 * Sends `count` messages from SENDERS new sender sessions (each sends its share one after the other) to KEYS
 * receiving sessions named `<keyPrefix><i>`, waits until each was received, and answers their latencies in ms.
 */
async function sendAll(runtime: Runtime, keyPrefix: string, count: number, store: SessionStore, pacing: Pacing): Promise<number[]> {
  const senders = await Promise.all(Array.from({ length: SENDERS }, () => runtime.createSession(benchSender)));
  const arrivals = pacing === 'paced' ? watchArrivals(runtime, keyPrefix) : undefined;
  let next = 0;
  await Promise.all(
    senders.map(async (session) => {
      for (let n = next++; n < count; n = next++) {
        const result = await session.send({ type: 'SEND', key: `${keyPrefix}${n % KEYS}`, n });
        if (!result.applied) throw new Error(`SEND ${n} was refused: ${result.code} ${result.message}`);
        const sent = result.events.find((event) => event.type === 'channel.sent');
        if (arrivals && sent) await arrivals.arrived((sent.data as { messageId: string }).messageId);
      }
    }),
  );
  arrivals?.stop();
  const sentAt = new Map<string, number>();
  for (const session of senders) {
    for (const event of await store.readEvents(session.id)) {
      if (event.type === 'channel.sent') sentAt.set((event.data as { messageId: string }).messageId, event.at);
    }
  }
  const receivedAt = new Map<string, number>();
  for (;;) {
    receivedAt.clear();
    for (let k = 0; k < KEYS; k++) {
      for (const event of await store.readEvents(`bench-receiver--${keyPrefix}${k}`)) {
        if (event.type === 'channel.received') receivedAt.set((event.data as { messageId: string }).messageId, event.at);
      }
    }
    if (receivedAt.size >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return [...sentAt].map(([id, at]) => receivedAt.get(id)! - at);
}

/**
 * `burst`: each sender sends its next message as soon as the last one's step is stored (the receiver may fall behind,
 * and the latency then includes the backlog); `paced`: each sender waits until its last message was received.
 */
type Pacing = 'paced' | 'burst';

/** Resolves `arrived(id)` once a receiving session of `keyPrefix` logged `channel.received` for the message. */
function watchArrivals(runtime: Runtime, keyPrefix: string): { arrived(messageId: string): Promise<void>; stop(): void } {
  const seen = new Set<string>();
  const waiting = new Map<string, () => void>();
  const stops = Array.from({ length: KEYS }, (_, k) =>
    runtime.session(`bench-receiver--${keyPrefix}${k}`).subscribe(0, (event) => {
      if (event.type !== 'channel.received') return;
      const id = (event.data as { messageId: string }).messageId;
      seen.add(id);
      waiting.get(id)?.();
    }),
  );
  return {
    arrived: (messageId) => (seen.has(messageId) ? Promise.resolve() : new Promise((resolve) => waiting.set(messageId, resolve))),
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}

/**
 * Messages per second one receiving process applies from a backlog: `count` messages are stored while no receiver
 * runs, then the receiving process starts; timed from when it is ready to the last message received.
 */
async function backlogRate(url: string, prefix: string, count: number): Promise<number> {
  const store = createRedisStore({ url, prefix });
  const runtime = createRuntime({ machines: [benchSender], store });
  const senders = await Promise.all(Array.from({ length: SENDERS }, () => runtime.createSession(benchSender)));
  let next = 0;
  await Promise.all(
    senders.map(async (session) => {
      for (let n = next++; n < count; n = next++) await session.send({ type: 'SEND', key: `k${n % KEYS}`, n });
    }),
  );
  const receiver = await startReceiver(url, prefix);
  const started = performance.now();
  for (;;) {
    let received = 0;
    for (let k = 0; k < KEYS; k++) {
      received += (await store.readEvents(`bench-receiver--k${k}`)).filter((e) => e.type === 'channel.received').length;
    }
    if (received >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const rate = count / ((performance.now() - started) / 1000);
  receiver.kill('SIGTERM');
  await new Promise((resolve) => receiver.once('exit', resolve));
  await store.close();
  return rate;
}

/** The receiving process, once it runs (its consumer group is made at the start of the stream, so none is missed). */
async function startReceiver(url: string, prefix: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'receiver', url, prefix], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('READY')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the receiving process exited (${code}) before it was ready`)));
  });
  return child;
}
