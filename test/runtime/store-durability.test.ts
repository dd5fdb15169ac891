import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool } from '@flowing/runtime';
import { REPO_DIR } from '../helpers/project.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { approvalMachine, singleToolMachine } from '../helpers/runtime-machines.ts';
import { storePlace } from '../helpers/store-spec.ts';
import { within } from '../helpers/wait.ts';

const CHILD = join(REPO_DIR, 'test/helpers/durability-child.ts');

let redis: TestRedis;
let dir: string;
beforeAll(async () => {
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), 'flowing-durable-'));
});
afterAll(async () => {
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

let runs = 0;
type Kind = 'sqlite' | 'redis';

interface Child {
  lines: string[];
  /** Resolves with the exit signal (or code). */
  exited: Promise<string>;
  kill(): void;
  /** Resolves when `check` holds for the lines printed so far (checked on every line); fails if the child exits first. */
  waitFor(check: (lines: string[]) => boolean, ms?: number): Promise<void>;
}

function startChild(args: string[]): Child {
  const child = spawn(process.execPath, ['--conditions=@flowing/source', '--import', import.meta.resolve('tsx'), CHILD, ...args], {
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const parts = text.split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const watcher of watchers) watcher();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `code ${code}: ${stderr.slice(-2_000)}`)),
  );
  return {
    lines,
    exited,
    kill: () => child.kill('SIGKILL'),
    async waitFor(check, ms = 30_000) {
      let watcher = () => {};
      const there = new Promise<void>((resolve) => {
        watcher = () => {
          if (check(lines)) resolve();
        };
        watchers.add(watcher);
        watcher();
      });
      const gone = exited.then(() => {
        if (!check(lines)) throw new Error('it exited');
      });
      try {
        await within(Promise.race([there, gone]), ms, 'the child to print the awaited lines');
      } catch (error) {
        throw new Error(
          `child did not get there (${(error as Error).message}, exit ${child.exitCode ?? child.signalCode}); stdout: ${lines.slice(-5).join(' | ')}; stderr: ${stderr.slice(-2_000)}`,
        );
      } finally {
        watchers.delete(watcher);
      }
    },
  };
}

const sessionOf = (lines: string[]) => lines.find((l) => l.startsWith('SESSION '))!.slice('SESSION '.length);

/** The same tools as the child's, for a resume in this process: they record in the ledger and answer. */
const recording = (name: string, ledger: string, options: { idempotent: boolean; risk: 'low' | 'high' }) =>
  defineTool({
    name,
    description: 'records that it ran and answers',
    input: z.object({ amount: z.number() }),
    output: z.object({ receipt: z.string() }),
    idempotent: options.idempotent,
    risk: options.risk,
    async run(_input, { idempotencyKey }) {
      appendFileSync(ledger, `RAN ${idempotencyKey}\n`);
      return { receipt: 'r-1' };
    },
  });

const ledgerLines = (ledger: string) => readFileSync(ledger, 'utf8').split('\n').filter(Boolean);

describe.each(['sqlite', 'redis'] as Kind[])('what is durable when: %s', (kind) => {
  it('D5: every send acknowledged before a SIGKILL at a random moment is in the store after it, with its whole commit', async () => {
    const rounds = 2;
    let acknowledged = 0;
    for (let round = 0; round < rounds; round++) {
      const where = storePlace(kind, dir, redis.url, ++runs);
      const child = startChild(['sends', where.spec]);
      await child.waitFor((lines) => lines.filter((l) => l.startsWith('ACK ')).length >= 8);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 300)));
      child.kill();
      expect(await child.exited).toBe('SIGKILL');
      const acked = new Map<string, number>();
      for (const line of child.lines.filter((l) => l.startsWith('ACK '))) {
        const [, id, seq] = line.split(' ');
        acked.set(id!, Math.max(acked.get(id!) ?? 0, Number(seq)));
      }
      const store = where.open();
      try {
        for (const id of child.lines.filter((l) => l.startsWith('SESSION ')).map((l) => l.slice('SESSION '.length))) {
          const log = await store.readEvents(id);
          const record = await store.load(id);
          expect(log.length).toBeGreaterThanOrEqual(acked.get(id) ?? 1);
          expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
          expect(record!.seq).toBe(log.length);
        }
        acknowledged += acked.size;
      } finally {
        await store.close?.();
      }
    }
    expect(acknowledged).toBeGreaterThan(rounds);
  }, 180_000);

  it('stores the started record of a non-idempotent call before the tool runs; the resumed session waits for a person', async () => {
    const where = storePlace(kind, dir, redis.url, ++runs);
    const ledger = join(dir, `ledger-${runs}.txt`);
    writeFileSync(ledger, '');
    const child = startChild(['charge', where.spec, ledger]);
    expect(await child.exited).toBe('SIGKILL'); // the tool killed its own process right after it started
    expect(ledgerLines(ledger)).toHaveLength(1);
    const store = where.open();
    try {
      const id = sessionOf(child.lines);
      const journal = await store.readJournal(id);
      expect(journal).toEqual([expect.objectContaining({ kind: 'tool', name: 'charge', idempotent: false })]);
      expect(journal[0]!.completed).toBeUndefined();
      expect(ledgerLines(ledger)[0]).toBe(`RAN ${id}:${journal[0]!.key}`);
      const machine = singleToolMachine(recording('charge', ledger, { idempotent: false, risk: 'low' }));
      const runtime = createRuntime({ machines: [machine], store });
      await runtime.resume(id);
      expect(await runtime.session(id).snapshot()).toMatchObject({ status: 'needs_attention', error: { code: 'TOOL_UNKNOWN_OUTCOME' } });
      expect(ledgerLines(ledger)).toHaveLength(1);
    } finally {
      await store.close?.();
    }
  }, 120_000);

  it('stores the start of a high-risk call and its consumed approval before the tool runs; a resume pays with the same key', async () => {
    const where = storePlace(kind, dir, redis.url, ++runs);
    const ledger = join(dir, `ledger-${runs}.txt`);
    writeFileSync(ledger, '');
    const child = startChild(['pay', where.spec, ledger]);
    expect(await child.exited).toBe('SIGKILL');
    const store = where.open();
    try {
      const id = sessionOf(child.lines);
      const record = await store.load(id);
      expect(record!.approval).toMatchObject({ tool: 'pay', decision: 'approved', consumed: true });
      const journal = await store.readJournal(id);
      expect(journal).toEqual([expect.objectContaining({ kind: 'tool', name: 'pay' })]);
      expect(journal[0]!.completed).toBeUndefined();
      const machine = approvalMachine(recording('pay', ledger, { idempotent: true, risk: 'high' }));
      const runtime = createRuntime({ machines: [machine], store });
      await runtime.resume(id);
      const lines = ledgerLines(ledger);
      expect(lines).toHaveLength(2);
      expect(lines[1]).toBe(lines[0]); // the same idempotency key: the service sees one payment
      expect(await runtime.session(id).snapshot()).toMatchObject({ status: 'waiting', context: { paid: 'r-1' } });
      // The consumed approval is not a second approval: another APPROVE is refused.
      expect(await runtime.session(id).send({ type: 'APPROVE' })).toMatchObject({ applied: false });
    } finally {
      await store.close?.();
    }
  }, 120_000);
});
