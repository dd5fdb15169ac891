/**
 * RELIABILITY crash points (D1-D3): a child process runs a session and kills itself with SIGKILL at a named crash
 * point (FLOWING_FAULT=<label>:<nth>); this process then resumes the session on the same store, as a restarted server
 * would, and checks the ledger the tools write outside the process and the session's log. Every label that a mode
 * passes, on SQLite and on Redis; for the two-step modes, nth (the first or the second tool step) comes from a
 * printed seed. The plan's 100 random runs per case are covered by `crash-serve.test.ts` (50 random SIGKILLs of a
 * real server); here every named point is hit on purpose, once per store.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argsHash, createRuntime, type RuntimeEvent } from '@flowing/runtime';
import type { CrashPoint } from '../../runtime/crash-points.ts';
import { crashPointMachine, type CrashPointMode } from '../helpers/crash-point-machines.ts';
import { runFaultChild } from '../helpers/fault-child.ts';
import { REPO_DIR } from '../helpers/project.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { seededRandom } from '../helpers/seeded.ts';
import { storePlace } from '../helpers/store-spec.ts';

const CHILD = join(REPO_DIR, 'test/helpers/crash-point-child.ts');
const TOOL_POINTS: readonly CrashPoint[] = [
  'before-append',
  'after-append-before-call',
  'after-effect-before-complete',
  'after-complete-before-transition',
];
const CASES: ReadonlyArray<{ mode: CrashPointMode; point: CrashPoint }> = [
  ...TOOL_POINTS.map((point) => ({ mode: 'charge' as const, point })),
  ...TOOL_POINTS.map((point) => ({ mode: 'lookup' as const, point })),
  ...[...TOOL_POINTS, 'after-approval-persist' as const].map((point) => ({ mode: 'pay' as const, point })),
];
const seed = Number(process.env.FLOWING_SEED ?? Math.floor(Math.random() * 1_000_000));
const random = seededRandom(seed);

let redis: TestRedis;
let dir: string;
let runs = 0;
beforeAll(async () => {
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), 'flowing-crash-points-'));
  process.stdout.write(`crash points: seed ${seed}\n`);
});
afterAll(async () => {
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

const runChild = (args: string[], fault: string) => runFaultChild(CHILD, args, fault);

/** Ledger lines as [idempotency key, amount]. */
const ledgerOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').slice(1) as [string, string]);
const countOf = (ledger: Array<[string, string]>, key: string) => ledger.filter(([k]) => k === key).length;
const dataOf = (event: RuntimeEvent) => event.data as Record<string, any>;

/** The log invariants of RELIABILITY: seqs 1..n, and at most one tool.completed per tool call, after its tool.started. */
function checkLog(events: readonly RuntimeEvent[]) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const started = new Set(events.filter((e) => e.type === 'tool.started').map((e) => dataOf(e).callId));
  const completed = events.filter((e) => e.type === 'tool.completed').map((e) => dataOf(e).callId as string);
  expect(new Set(completed).size).toBe(completed.length);
  for (const callId of completed) expect(started.has(callId)).toBe(true);
}

describe.each(['sqlite', 'redis'] as const)('crash points on the %s store', (kind) => {
  it.each(CASES)(
    '$mode killed at $point: resumed, the tool ran as its contract allows and the log holds',
    async ({ mode, point }) => {
      const nth = mode === 'pay' ? 1 : 1 + Math.floor(random() * 2);
      const where = storePlace(kind, dir, redis.url, ++runs);
      const ledgerFile = join(dir, `ledger-${runs}.txt`);
      writeFileSync(ledgerFile, '');
      const child = await runChild([mode, where.spec, ledgerFile], `${point}:${nth}`);
      expect(child.ended, `seed ${seed}: the child reached ${point}:${nth}`).toBe('SIGKILL');
      const sessionId = child.lines.find((l) => l.startsWith('SESSION '))!.slice('SESSION '.length);

      const store = where.open();
      try {
        const { machine } = crashPointMachine(mode, ledgerFile);
        const runtime = createRuntime({ machines: [machine], store });
        await runtime.resume(sessionId);
        const session = runtime.session(sessionId);
        let snapshot = await session.snapshot();
        // An approval the crash kept from being stored is given again, as the person would: it must still pay once.
        if (mode === 'pay' && snapshot.approval && !snapshot.approval.decision) {
          expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true });
          snapshot = await session.snapshot();
        }
        const events = await session.events();
        checkLog(events);
        const ledger = ledgerOf(ledgerFile);
        const started = events.filter((e) => e.type === 'tool.started').map(dataOf);
        const completedIds = new Set(events.filter((e) => e.type === 'tool.completed').map((e) => dataOf(e).callId));
        const context = `seed ${seed}, ${mode} at ${point}:${nth}`;

        if (mode === 'charge') {
          // D1: never a second request for a step; a call that may have run waits for a person, never retried.
          for (const [key] of ledger) expect(countOf(ledger, key), context).toBe(1);
          const unclear = point === 'after-append-before-call' || point === 'after-effect-before-complete';
          expect(snapshot.status, context).toBe(unclear ? 'needs_attention' : 'waiting');
          if (unclear) {
            expect(snapshot.error, context).toMatchObject({ code: 'TOOL_UNKNOWN_OUTCOME' });
            const crashed = started.at(-1)!;
            expect(completedIds.has(crashed.callId), context).toBe(false);
            expect(countOf(ledger, crashed.idempotencyKey), context).toBe(point === 'after-effect-before-complete' ? 1 : 0);
          }
        } else if (mode === 'lookup') {
          // D2: the session goes on; each step has one idempotency key, was requested at least once, completed once.
          expect(snapshot.status, context).toBe('waiting');
          for (const call of started) {
            expect(completedIds.has(call.callId), context).toBe(true);
            expect(countOf(ledger, call.idempotencyKey), context).toBeGreaterThanOrEqual(1);
          }
          expect(new Set(ledger.map(([key]) => key)).size, context).toBeLessThanOrEqual(2);
        } else {
          // D3: paid for exactly the approved arguments, under one idempotency key, whatever the crash.
          expect(snapshot, context).toMatchObject({ status: 'waiting', context: { paid: 'r-25' } });
          expect(new Set(ledger.map(([key]) => key)).size, context).toBe(1);
          expect(
            ledger.every(([, amount]) => amount === '25'),
            context,
          ).toBe(true);
          const decided = events.filter((e) => e.type === 'approval.decided').map(dataOf);
          expect(
            decided.map((d) => d.decision),
            context,
          ).toEqual(['approved']);
          const paid = started.filter((call) => call.tool === 'pay');
          expect(paid.length, context).toBeGreaterThanOrEqual(1);
          for (const call of paid) expect(argsHash(call.args), context).toBe(decided[0]!.argsHash);
        }
      } finally {
        await store.close?.();
      }
    },
    90_000,
  );
});
