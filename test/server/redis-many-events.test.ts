import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { fullLog, getJson, makeLeaseProject, post, startServe, type ServeChild } from './takeover-harness.ts';

let redis: TestRedis;
let project: Awaited<ReturnType<typeof makeLeaseProject>>;
let servers: ServeChild[] = [];
beforeAll(async () => {
  redis = await startRedis();
  project = await makeLeaseProject();
  servers = await Promise.all([0, 1].map(() => startServe(project.dir, ['--store', redis.url])));
}, 120_000);
afterAll(async () => {
  for (const server of servers) await server.kill();
  await redis?.stop();
  await project?.remove();
});

/** What the client saw: accepted events per session, and the 409s it retried, by code. */
interface Tally {
  accepted: Map<string, number>;
  retried: Map<string, number>;
  other: Array<{ status: number; body: unknown }>;
}

/**
 * POSTs one INC to `base`; a 409 is retried (after its Retry-After, capped) until the event is accepted; any other
 * answer than 200 or 409 is recorded as a failure and not retried.
 */
async function sendUntilAccepted(base: string, sessionId: string, tally: Tally): Promise<void> {
  for (;;) {
    const answer = await post(`${base}/sessions/${sessionId}/events`, { type: 'INC' });
    if (answer.status === 200 && answer.body.applied === true) {
      tally.accepted.set(sessionId, (tally.accepted.get(sessionId) ?? 0) + 1);
      return;
    }
    if (answer.status !== 409) {
      tally.other.push({ status: answer.status, body: answer.body });
      return;
    }
    tally.retried.set(answer.body.code, (tally.retried.get(answer.body.code) ?? 0) + 1);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(Number(answer.headers.get('retry-after') ?? 0) * 1000, 50) + Math.random() * 20),
    );
  }
}

/** The invariants of one session after the run: contiguous log, one state change per accepted event, count = accepted. */
async function checkSession(base: string, sessionId: string, accepted: number) {
  const log = await fullLog(base, sessionId);
  const seqs = log.map((e) => e.seq);
  const changes = log.filter((e) => e.type === 'state.changed' && e.data.event === 'INC');
  const view = await getJson(`${base}/sessions/${sessionId}`);
  return {
    contiguous: seqs.every((seq, i) => seq === i + 1),
    duplicates: seqs.length - new Set(seqs).size,
    changes: changes.length,
    // Replaying the log sequentially: the count each change recorded (whole, or as a patch) goes up by exactly one.
    replayed: changes.every((e, i) => (e.data.contextPatch ?? e.data.context)?.count === i + 1),
    count: view.context.count as number,
    accepted,
  };
}

describe('two flowing serve processes on one Redis: many concurrent events', () => {
  it('applies 1,000 concurrent events over 50 sessions, sent alternately to both, with contiguous seqs, no lost update and no duplicate', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push((await post(`${servers[i % 2]!.url}/sessions`, { machine: 'lease-counter' })).body.sessionId);
    const tally: Tally = { accepted: new Map(), retried: new Map(), other: [] };
    const started = performance.now();
    await Promise.all(Array.from({ length: 1_000 }, (_v, i) => sendUntilAccepted(servers[i % 2]!.url, ids[i % 50]!, tally)));
    const seconds = (performance.now() - started) / 1000;

    expect(tally.other).toEqual([]);
    expect([...tally.retried.keys()].filter((code) => code !== 'SESSION_LEASED')).toEqual([]);
    for (const [i, id] of ids.entries()) {
      const result = await checkSession(servers[(i + 1) % 2]!.url, id, tally.accepted.get(id) ?? 0);
      expect(result).toEqual({ contiguous: true, duplicates: 0, changes: 20, replayed: true, count: 20, accepted: 20 });
    }
    console.info(
      `1,000 events / 50 sessions / 2 processes: ${seconds.toFixed(2)} s, ${(1000 / seconds).toFixed(0)} events/s, 409 retried: ${JSON.stringify(Object.fromEntries(tally.retried))}`,
    );
  }, 180_000);

  it('C1: answers 1,000 concurrent events to one session split over both processes with 2xx or 409; the log has each once, in order', async () => {
    const id = (await post(`${servers[0]!.url}/sessions`, { machine: 'lease-counter' })).body.sessionId as string;
    // Half are INC (applied; a SESSION_LEASED is retried), half PING (refused for good with NO_TRANSITION): a session
    // stops at maxSteps (1,000 by default), and refusals are logged without being steps.
    const tally: Tally = { accepted: new Map(), retried: new Map(), other: [] };
    const refused: string[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 1_000 }, async (_v, i) => {
        const base = servers[i % 2]!.url;
        if (i % 4 < 2) return sendUntilAccepted(base, id, tally);
        const answer = await post(`${base}/sessions/${id}/events`, { type: 'PING' });
        if (answer.status === 409 && answer.body.code === 'NO_TRANSITION') refused.push(answer.body.code);
        else if (answer.status === 409 && answer.body.code === 'SESSION_LEASED') {
          tally.retried.set('SESSION_LEASED', (tally.retried.get('SESSION_LEASED') ?? 0) + 1);
          // Not stepped yet: send it again until it gets its final answer.
          for (;;) {
            const again = await post(`${base}/sessions/${id}/events`, { type: 'PING' });
            if (again.status === 409 && again.body.code === 'NO_TRANSITION') return void refused.push(again.body.code);
            if (!(again.status === 409 && again.body.code === 'SESSION_LEASED')) return void tally.other.push(again);
            tally.retried.set('SESSION_LEASED', (tally.retried.get('SESSION_LEASED') ?? 0) + 1);
          }
        } else tally.other.push({ status: answer.status, body: answer.body });
      }),
    );
    const seconds = (performance.now() - started) / 1000;

    expect(tally.other).toEqual([]);
    expect([...tally.retried.keys()].filter((code) => code !== 'SESSION_LEASED')).toEqual([]);
    expect(refused).toHaveLength(500);
    const result = await checkSession(servers[1]!.url, id, tally.accepted.get(id) ?? 0);
    expect(result).toEqual({ contiguous: true, duplicates: 0, changes: 500, replayed: true, count: 500, accepted: 500 });
    const log = await fullLog(servers[0]!.url, id);
    // session.started and the initial state, then exactly one entry per answered POST.
    expect(log.length).toBe(2 + 1_000);
    expect(log.filter((e) => e.type === 'transition.rejected' && e.data.code === 'NO_TRANSITION')).toHaveLength(500);
    console.info(
      `C1 1,000 events / 1 session / 2 processes: ${seconds.toFixed(2)} s, 409 retried: ${JSON.stringify(Object.fromEntries(tally.retried))}`,
    );
  }, 300_000);
});
