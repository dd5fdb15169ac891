import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { fullLog, getJson, makeLeaseProject, post, startServe, type ServeChild } from './takeover-harness.ts';

/** The lease TTL the two servers run with; takeover must happen within it + 1 s. */
const TTL_MS = 2_000;

let redis: TestRedis;
let project: Awaited<ReturnType<typeof makeLeaseProject>>;
const children: ServeChild[] = [];
beforeAll(async () => {
  redis = await startRedis();
  project = await makeLeaseProject();
});
afterAll(async () => {
  for (const child of children) {
    if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGCONT');
    await child.kill();
  }
  await redis?.stop();
  await project?.remove();
});

async function startPair(): Promise<[ServeChild, ServeChild]> {
  const args = ['--store', redis.url, '--lease-ttl', String(TTL_MS)];
  const env = { FLOWING_TEST_LEDGER: project.ledger };
  const pair = await Promise.all([startServe(project.dir, args, env), startServe(project.dir, args, env)]);
  children.push(...pair);
  return pair;
}

/** The ledger lines of one session's calls: every time the tool really ran, whichever process ran it. */
async function ledgerOf(sessionId: string): Promise<Array<{ pid: number; key: string }>> {
  const lines = (await readFile(project.ledger, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { pid: number; key: string });
  return lines.filter((line) => line.key.startsWith(`${sessionId}:`));
}

/** Re-checks every 20 ms (the takeover time is measured with it) until `check` stops throwing or `timeout` ms pass. */
const often = (timeout: number) => ({ timeout, interval: 20 });

/** Process state letter from /proc (T = stopped). */
async function processState(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

describe('two flowing serve processes on one Redis: leases and takeover (C2)', () => {
  it('runs the step in one process only; when that holder is SIGKILLed mid-call the other takes over within TTL + 1 s and the tool ran once', async () => {
    const [a, b] = await startPair();
    const created = await post(`${a.url}/sessions`, { machine: 'lease-slow' });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;

    // Both processes are asked to run the next step at the same time.
    // The holder's request dies with it (its connection is reset); only the survivor's answer is looked at.
    const sends = [a, b].map((server) =>
      post(`${server.url}/sessions/${id}/events`, { type: 'CHARGE', ms: 60_000 }).catch((error: Error) => ({
        status: 0,
        body: { error: error.message },
        headers: new Headers(),
      })),
    );
    const [started] = await vi.waitFor(async () => {
      const lines = await ledgerOf(id);
      expect(lines, 'the charge to start').not.toEqual([]);
      return lines;
    }, often(20_000));
    const holder = [a, b].find((s) => s.pid === started!.pid)!;
    const other = holder === a ? b : a;
    expect(holder).toBeDefined();

    const killedAt = Date.now();
    await holder.kill();
    const takenOver = await vi.waitFor(
      async () => {
        const view = await getJson(`${other.url}/sessions/${id}`);
        expect(view.status, 'the other process to take the session over').toBe('needs_attention');
        return view;
      },
      often(TTL_MS + 5_000),
    );
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThanOrEqual(TTL_MS + 1_000);
    expect(takenOver.error.code).toBe('TOOL_UNKNOWN_OUTCOME');

    // The survivor's own request for that step was not run a second time: it is refused, the session waits for a person.
    const survivorAnswer = await sends[holder === a ? 1 : 0];
    expect(survivorAnswer).toMatchObject({ status: 409, body: { code: 'SESSION_NEEDS_ATTENTION' } });

    expect(await ledgerOf(id)).toHaveLength(1);
    const log = await fullLog(other.url, id);
    expect(log.map((e) => e.seq)).toEqual(log.map((_e, i) => i + 1));
    expect(log.filter((e) => e.type === 'tool.started')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'tool.completed')).toHaveLength(0);
    expect(log.filter((e) => e.type === 'tool.unknown_outcome')).toHaveLength(1);
    console.info(`C2 takeover after SIGKILL: ${tookMs} ms (lease TTL ${TTL_MS} ms)`);
    await other.kill();
  }, 90_000);

  it('refuses every write of a holder paused past its TTL (STORE_FENCED): after SIGCONT nothing it wrote lands', async () => {
    const [a, b] = await startPair();
    const id = (await post(`${a.url}/sessions`, { machine: 'lease-slow' })).body.sessionId as string;

    // A runs the charge and stops itself (SIGSTOP) right after the side effect, before writing its result.
    const paused = post(`${a.url}/sessions/${id}/events`, { type: 'CHARGE', ms: 0, stop: true });
    await vi.waitFor(async () => {
      expect(await ledgerOf(id), 'A to run the charge').toHaveLength(1);
      expect(await processState(a.pid), 'A to stop mid-call').toBe('T');
    }, often(20_000));
    const stoppedAt = Date.now();
    const takenOver = await vi.waitFor(
      async () => {
        const view = await getJson(`${b.url}/sessions/${id}`);
        expect(view.status, 'B to take the session over').toBe('needs_attention');
        return view;
      },
      often(TTL_MS + 5_000),
    );
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(TTL_MS + 1_000);
    const before = await fullLog(b.url, id);

    a.child.kill('SIGCONT');
    const answer = await paused;
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('STORE_FENCED');

    // A second event for the session, sent to A: A applies one session's operations one after another, so it
    // answers this one only once everything left of the paused step is over in A. A write of that step would have
    // landed before this answer, and the refusal lands right behind B's last event: after it, the log must be B's
    // log plus this one refusal and nothing else. (This replaces waiting a fixed time for writes that must not come.)
    const next = await post(`${a.url}/sessions/${id}/events`, { type: 'CHARGE', ms: 0 });
    expect(next).toMatchObject({ status: 409, body: { code: 'SESSION_NEEDS_ATTENTION' } });
    const after = await fullLog(b.url, id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toMatchObject([
      { seq: before.length + 1, type: 'transition.rejected', data: { event: 'CHARGE', code: 'SESSION_NEEDS_ATTENTION' } },
    ]);
    // Nothing A wrote after the takeover landed: the session is as B left it (plus that refusal in its log).
    expect(await getJson(`${b.url}/sessions/${id}`)).toMatchObject({
      status: 'needs_attention',
      seq: takenOver.seq + 1,
      step: takenOver.step,
      context: takenOver.context,
    });
    expect(after.filter((e) => e.type === 'tool.completed')).toHaveLength(0);
    expect(await ledgerOf(id)).toHaveLength(1);
    // A goes on serving: its next request for the session is answered from the store as it is now.
    expect((await getJson(`${a.url}/sessions/${id}`)).status).toBe('needs_attention');
  }, 90_000);
});
