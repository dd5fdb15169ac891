/**
 * Latency of requests while Redis is down: a session is created, Redis is SIGKILLed, then ROUNDS sequential requests
 * of each kind are timed. Prints the median and the slowest in ms, and the first answer's code and message.
 * Run: node --conditions=@flowing/source --import tsx test/server/redis-down-latency.ts [ROUNDS]
 */
import { createRuntime } from '@flowing/runtime';
import { createRedisStore } from '@flowing/runtime/redis';
import { startServer } from '@flowing/runtime/server';
import { gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { startRedis } from '../helpers/redis.ts';

const rounds = Number(process.argv[2] ?? 5);
const redis = await startRedis();
const store = createRedisStore({ url: redis.url, prefix: 'latency:' });
const runtime = createRuntime({ machines: [refusalMachine(gateTool().tool)], store });
const server = await startServer(runtime, { port: 0, log: () => {}, rateLimit: { client: false, session: false } });
await server.recovered;
const created = await (await fetch(`${server.url}/sessions`, { method: 'POST', body: JSON.stringify({ machine: 'refusals' }) })).json();
await redis.kill();

async function measure(name: string, request: () => Promise<Response>) {
  const times: number[] = [];
  let first = '';
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const response = await request();
    const body = await response.text();
    times.push(performance.now() - started);
    if (i === 0) first = `${response.status} ${body.slice(0, 160)}`;
  }
  times.sort((a, b) => a - b);
  console.log(`${name}: median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms, max ${times.at(-1)!.toFixed(0)} ms; ${first}`);
}

await measure('POST /sessions/:id/events', () =>
  fetch(`${server.url}/sessions/${created.sessionId}/events`, { method: 'POST', body: JSON.stringify({ type: 'PING' }) }),
);
await measure('GET /readyz', () => fetch(`${server.url}/readyz`));
// Twenty at once, BURSTS times: the slowest of each burst.
const slowest: number[] = [];
for (let i = 0; i < rounds; i++) {
  const started = performance.now();
  const times = await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(`${server.url}/sessions/${created.sessionId}/events`, { method: 'POST', body: JSON.stringify({ type: 'PING' }) }).then(
        async (r) => {
          await r.text();
          return performance.now() - started;
        },
      ),
    ),
  );
  slowest.push(Math.max(...times));
}
slowest.sort((a, b) => a - b);
console.log(
  `20 concurrent POST /sessions/:id/events: median of the slowest ${slowest[Math.floor(rounds / 2)]!.toFixed(0)} ms, max ${slowest.at(-1)!.toFixed(0)} ms`,
);
await server.close();
await store.close();
process.exit(0);
