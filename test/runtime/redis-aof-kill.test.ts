/**
 * RELIABILITY D12, second half: Redis with `appendonly yes` and `appendfsync always` is SIGKILLed 20 times while
 * sessions are being created and sent events; after each kill it restarts on the same port and data directory. Every
 * event the runtime acknowledged (an applied `send`, a resolved `createSession`) must be in the store at the end.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type Session } from '@flowing/runtime';
import { createRedisStore } from '@flowing/runtime/redis';
import { SHORT_LEASE_TTL_MS, startRedis, type TestRedis } from '../helpers/redis.ts';
import { singleToolMachine } from '../helpers/runtime-machines.ts';
import { seededRandom } from '../helpers/seeded.ts';

const AOF_ALWAYS = ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
const KILLS = 20;

const echo = defineTool({
  name: 'echo',
  description: 'answers at once',
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  idempotent: true,
  async run(input) {
    return input;
  },
});
const machine = singleToolMachine(echo);

let dir: string | undefined;
let redis: TestRedis | undefined;
afterEach(async () => {
  await redis?.kill();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Redis with appendfsync always, killed with SIGKILL mid-session (D12)', () => {
  it(`loses no acknowledged event across ${KILLS} kills of redis-server`, async () => {
    const seed = Number(process.env.FLOWING_SEED ?? Math.floor(Math.random() * 1_000_000));
    const random = seededRandom(seed);
    dir = await mkdtemp(join(tmpdir(), 'flowing-aof-kill-'));
    redis = await startRedis(AOF_ALWAYS, { dir });
    const { port, url } = redis;
    const store = createRedisStore({ url, prefix: 'kill:', lease: { ttlMs: SHORT_LEASE_TTL_MS } });
    const runtime = createRuntime({ machines: [machine], store });
    /** The highest seq acknowledged per session. */
    const acknowledged = new Map<string, number>();
    let applied = 0;
    let refusedOrFailed = 0;

    const step = async (sessions: Array<Session<{ type: 'RUN'; args: unknown }>>) => {
      try {
        if (sessions.length < 3 || random() < 0.2) {
          const session = await runtime.createSession(machine);
          acknowledged.set(session.id, Math.max(acknowledged.get(session.id) ?? 0, 2));
          sessions.push(session as Session<{ type: 'RUN'; args: unknown }>);
          return;
        }
        const session = sessions[Math.floor(random() * sessions.length)]!;
        const result = await session.send({ type: 'RUN', args: { n: applied } });
        if (result.applied) {
          applied++;
          const last = result.events[result.events.length - 1]?.seq ?? 0;
          acknowledged.set(session.id, Math.max(acknowledged.get(session.id) ?? 0, last));
        } else {
          refusedOrFailed++;
        }
      } catch {
        refusedOrFailed++; // the store went away mid-step: not acknowledged, so nothing is owed
      }
    };

    for (let kill = 0; kill < KILLS; kill++) {
      const sessions: Array<Session<{ type: 'RUN'; args: unknown }>> = [];
      let stopping = false;
      const workers = Array.from({ length: 3 }, async () => {
        while (!stopping) await step(sessions);
      });
      // Let some work be acknowledged, then kill at a random moment.
      await new Promise((resolve) => setTimeout(resolve, 30 + random() * 120));
      await redis.kill();
      stopping = true;
      const restarted = startRedis(AOF_ALWAYS, { dir, port });
      redis = await restarted;
      await Promise.all(workers);
    }

    // Read everything back through a fresh client, after one more restart from the append-only file alone.
    await redis.kill();
    redis = await startRedis(AOF_ALWAYS, { dir, port });
    const reader = createRedisStore({ url, prefix: 'kill:' });
    try {
      expect(acknowledged.size, `seed ${seed}`).toBeGreaterThan(KILLS);
      expect(applied, `seed ${seed}`).toBeGreaterThan(KILLS);
      for (const [sessionId, seq] of acknowledged) {
        const events = await reader.readEvents(sessionId);
        expect(events.length, `session ${sessionId}, seed ${seed}`).toBeGreaterThanOrEqual(seq);
        expect(
          events.slice(0, seq).map((e) => e.seq),
          `seed ${seed}`,
        ).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
      }
    } finally {
      await reader.close();
      await store.close();
    }
    process.stdout.write(
      `D12 kills: seed ${seed}, ${KILLS} SIGKILLs of redis-server, ${acknowledged.size} sessions, ${applied} applied sends acknowledged (${refusedOrFailed} refused or failed), 0 lost\n`,
    );
  }, 120_000);
});
