/**
 * Crash recovery across a tree of sessions: a process runs a parent whose state invokes a child machine and approves
 * the child's high-risk payment through the parent's id, and kills itself with SIGKILL at a named crash point (inside
 * the child's payment, or in the parent's machine call). This process then resumes the parent on the same store, as a
 * restarted server would, and checks the payment ledger written outside the process and both sessions' logs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type RuntimeEvent } from '@flowing/runtime';
import type { CrashPoint } from '../../runtime/crash-points.ts';
import { crashChildMachines } from '../helpers/child-machines.ts';
import { runFaultChild } from '../helpers/fault-child.ts';
import { REPO_DIR } from '../helpers/project.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { storePlace } from '../helpers/store-spec.ts';

const PROCESS = join(REPO_DIR, 'test/helpers/crash-child-process.ts');

/**
 * Each case: the crash point, which time it is reached (the child's `lookup` is its first tool call, `pay` the
 * second), and what the resumed tree ends in: paid once and done, or the child stopped for a person (a payment whose
 * outcome is unknown is never repeated) with the parent waiting on it.
 */
const CASES: ReadonlyArray<{ point: CrashPoint; nth: number; paid: 0 | 1; ends: 'done' | 'attention' }> = [
  { point: 'before-append', nth: 2, paid: 1, ends: 'done' },
  { point: 'after-approval-persist', nth: 1, paid: 0, ends: 'attention' },
  { point: 'after-append-before-call', nth: 2, paid: 0, ends: 'attention' },
  { point: 'after-effect-before-complete', nth: 2, paid: 1, ends: 'attention' },
  { point: 'after-complete-before-transition', nth: 2, paid: 1, ends: 'done' },
  { point: 'machine-before-child', nth: 1, paid: 1, ends: 'done' },
  { point: 'machine-child-ended', nth: 1, paid: 1, ends: 'done' },
];

let redis: TestRedis;
let dir: string;
let runs = 0;
beforeAll(async () => {
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), 'flowing-crash-child-'));
});
afterAll(async () => {
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

const runProcess = (args: string[], fault: string) => runFaultChild(PROCESS, args, fault);

/** Seqs 1..n, and at most one completion per call (tool or machine), after its start. */
function checkLog(events: readonly RuntimeEvent[]) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  for (const [start, ends] of [
    ['tool.started', ['tool.completed']],
    ['machine.started', ['machine.done', 'machine.failed']],
  ] as const) {
    const started = new Set(events.filter((e) => e.type === start).map((e) => e.data.callId));
    const ended = events.filter((e) => (ends as readonly string[]).includes(e.type)).map((e) => e.data.callId);
    expect(new Set(ended).size).toBe(ended.length);
    for (const callId of ended) expect(started.has(callId)).toBe(true);
  }
}

describe.each(['sqlite', 'redis'] as const)('a parent and its child killed at a crash point, on the %s store', (kind) => {
  it.each(CASES)(
    'killed at $point:$nth, the resumed tree pays at most once and both logs hold',
    async ({ point, nth, paid, ends }) => {
      const where = storePlace(kind, dir, redis.url, ++runs);
      const ledgerFile = join(dir, `ledger-${runs}.txt`);
      writeFileSync(ledgerFile, '');
      const crashed = await runProcess([where.spec, ledgerFile], `${point}:${nth}`);
      expect(crashed.ended, `the process reached ${point}:${nth}`).toBe('SIGKILL');
      const parentId = crashed.lines.find((l) => l.startsWith('SESSION '))!.slice('SESSION '.length);

      const store = where.open();
      try {
        const runtime = createRuntime({ machines: Object.values(crashChildMachines(ledgerFile)), store });
        await runtime.resume(parentId);
        const parent = runtime.session(parentId);
        let view = await parent.snapshot();
        // A decision the crash kept from being stored is given again through the parent, as the person would.
        if (view.waitingOn?.approval && !view.waitingOn.approval.decision) {
          expect(await parent.send({ type: 'APPROVE' })).toMatchObject({ applied: true });
          view = await parent.snapshot();
        }
        const started = (await parent.events()).filter((e) => e.type === 'machine.started');
        const childId = started[0]!.data.childId as string;
        expect(new Set(started.map((e) => e.data.childId))).toEqual(new Set([childId]));
        const child = await runtime.session(childId).snapshot();
        if (ends === 'done') {
          expect(view).toMatchObject({ status: 'done', state: 'refunded', context: { refundId: 'r-42' } });
          expect(child.status).toBe('done');
        } else {
          expect(child).toMatchObject({ status: 'needs_attention', error: { code: 'TOOL_UNKNOWN_OUTCOME' } });
          expect(view).toMatchObject({ status: 'waiting', state: 'billing', waitingOn: { sessionId: childId, status: 'needs_attention' } });
        }
        const ledger = readFileSync(ledgerFile, 'utf8').split('\n').filter(Boolean);
        expect(ledger).toHaveLength(paid);
        checkLog(await parent.events());
        checkLog(await runtime.session(childId).events());
      } finally {
        await store.close?.();
      }
    },
    90_000,
  );
});
