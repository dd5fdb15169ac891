/**
 * Model-proposed approvals under SIGKILL: a child process runs an agent whose model proposes a high-risk,
 * non-idempotent `pay`, and approves it; FLOWING_FAULT kills it between the stored approval and the call, after the
 * call's start is stored, or after the payment before its result is stored. A runtime in this process resumes the
 * session (SQLite) and the ledger the tool writes outside the process shows it was never paid twice.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argsHash, createRuntime, type RuntimeEvent } from '@flowing/runtime';
import type { CrashPoint } from '../../runtime/crash-points.ts';
import { crashPointMachine, proposingModel } from '../helpers/crash-point-machines.ts';
import { runFaultChild } from '../helpers/fault-child.ts';
import { REPO_DIR } from '../helpers/project.ts';
import { storePlace } from '../helpers/store-spec.ts';

const CHILD = join(REPO_DIR, 'test/helpers/crash-point-child.ts');

let dir: string;
let runs = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-proposal-crash-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const runChild = (args: string[], fault: string) => runFaultChild(CHILD, args, fault);

const dataOf = (event: RuntimeEvent) => event.data as Record<string, any>;

describe('a model-proposed payment, killed around its approval', () => {
  it.each([
    // The approval is stored, the call not started: the resumed session pays, once.
    { point: 'before-append' as CrashPoint, status: 'waiting', paid: 1 },
    // The call's start is stored, the payment not made: never run again, a person looks.
    { point: 'after-approval-persist' as CrashPoint, status: 'needs_attention', paid: 0 },
    // Paid, the result not stored: never run again, a person looks.
    { point: 'after-effect-before-complete' as CrashPoint, status: 'needs_attention', paid: 1 },
  ])(
    'killed at $point: resumed, paid $paid time(s), never twice',
    async ({ point, status, paid }) => {
      const where = storePlace('sqlite', dir, '', ++runs);
      const ledgerFile = join(dir, `ledger-${runs}.txt`);
      writeFileSync(ledgerFile, '');
      const child = await runChild(['propose', where.spec, ledgerFile], `${point}:1`);
      expect(child.ended).toBe('SIGKILL');
      const sessionId = child.lines.find((l) => l.startsWith('SESSION '))!.slice('SESSION '.length);

      const store = where.open();
      const model = await proposingModel('resumed');
      try {
        const { machine } = crashPointMachine('propose', ledgerFile);
        const runtime = createRuntime({ machines: [machine], store, llm: model.llm });
        await runtime.resume(sessionId);
        const session = runtime.session(sessionId);
        const snapshot = await session.snapshot();
        const events = await session.events();
        const ledger = readFileSync(ledgerFile, 'utf8').split('\n').filter(Boolean);
        expect(ledger).toHaveLength(paid);
        expect(snapshot.status).toBe(status);
        const decided = events.filter((e) => e.type === 'approval.decided').map(dataOf);
        expect(decided.map((d) => d.decision)).toEqual(['approved']);
        for (const call of events.filter((e) => e.type === 'tool.started').map(dataOf)) {
          expect(call.tool).toBe('pay');
          expect(argsHash(call.args)).toBe(decided[0]!.argsHash);
        }
        if (status === 'waiting') {
          expect(snapshot.context).toMatchObject({ answer: 'Paid.' });
          // The resumed loop asked the model once, for its answer: the proposal was not asked for again.
          expect(model.fake.requests).toHaveLength(1);
          expect(model.fake.requests[0]!.body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
        } else {
          expect(snapshot.error).toMatchObject({ code: 'TOOL_UNKNOWN_OUTCOME' });
          expect(model.fake.requests).toHaveLength(0);
        }
      } finally {
        await model.fake.close();
        await store.close?.();
      }
    },
    90_000,
  );
});
