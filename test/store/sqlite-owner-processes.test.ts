import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { REPO_DIR } from '../helpers/project.ts';
import { testEvents, testRecord } from '../helpers/stores.ts';
import { within } from '../helpers/wait.ts';

const CHILD = fileURLToPath(new URL('../helpers/sqlite-owner-child.ts', import.meta.url));

/** A child process of sqlite-owner-child.ts: the JSON lines it printed, a wait for the next matching one, its exit. */
interface OwnerChild {
  child: ChildProcess;
  pid: number;
  lines: Array<Record<string, any>>;
  next(match: (line: Record<string, any>) => boolean, what: string): Promise<Record<string, any>>;
  exited: Promise<string>;
}

const children: OwnerChild[] = [];
let dir: string;
let file: string;
const opened: SqliteStore[] = [];
const open = (options: Parameters<typeof createSqliteStore>[0] = {}) => {
  const store = createSqliteStore({ file, ...options });
  opened.push(store);
  return store;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-owner-'));
  file = join(dir, 'sessions.db');
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.child.exitCode === null && c.child.signalCode === null) {
      c.child.kill('SIGCONT');
      c.child.kill('SIGKILL');
    }
    await c.exited;
  }
  for (const store of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

function startChild(mode: 'try' | 'hold' | 'read', target = file, ttlMs?: number): OwnerChild {
  const child = spawn(
    process.execPath,
    ['--conditions=@flowing/source', '--import', import.meta.resolve('tsx'), CHILD, mode, target, ...(ttlMs ? [String(ttlMs)] : [])],
    { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: Array<Record<string, any>> = [];
  const waiting = new Set<() => void>();
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
    for (const wake of waiting) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const wake of waiting) wake();
      resolve(signal ?? `code ${code}${stderr ? `: ${stderr.slice(-1_000)}` : ''}`);
    }),
  );
  const made: OwnerChild = {
    child,
    pid: child.pid!,
    lines,
    exited,
    next(match, what) {
      return within(
        new Promise((resolve, reject) => {
          const look = () => {
            const found = lines.find(match);
            if (found) {
              waiting.delete(look);
              resolve(found);
            } else if (child.exitCode !== null || child.signalCode !== null) {
              waiting.delete(look);
              reject(new Error(`the child ended before ${what}: ${JSON.stringify(lines)} ${stderr}`));
            }
          };
          waiting.add(look);
          look();
        }),
        30_000,
        what,
      );
    },
  };
  children.push(made);
  return made;
}

/** Process state letter from /proc (T = stopped). */
async function processState(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

const commit = (store: SqliteStore, id: string, version: number) =>
  store.commit({
    expectedVersion: version - 1,
    record: testRecord(id, version, version),
    events: testEvents(id, version, version),
    journal: [],
  });

describe('SQLite store: one writer process per file', () => {
  it('refuses a second writer process with STORE_IN_USE naming the file, the owner pid and host, and how to read it', async () => {
    const owner = open();
    await commit(owner, 'a', 1);
    const second = startChild('try');
    const answer = await second.next((l) => 'error' in l || 'opened' in l, 'the second writer to answer');
    expect(answer).toEqual({
      error: {
        code: 'STORE_IN_USE',
        message: expect.stringMatching(
          new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is in use by process ${process.pid} on`),
        ),
        details: { file, pid: process.pid, host: hostname(), heartbeatAt: expect.any(Number) },
      },
    });
    expect(answer.error.message).toContain('readOnly: true');
    expect(await second.exited).toBe('code 0');
    // The owner goes on writing.
    await commit(owner, 'a', 2);
  });

  it('lets a reader process list sessions while the owner writes, and refuses its writes with STORE_READ_ONLY', async () => {
    const owner = open();
    await commit(owner, 'a', 1);
    const reader = startChild('read');
    const listed = await reader.next((l) => 'sessions' in l, 'the listing');
    expect(listed.sessions).toEqual(['a']);
    expect(listed.owner).toMatchObject({ pid: process.pid, host: hostname() });
    expect(await reader.next((l) => 'error' in l, 'the refused write')).toMatchObject({ error: { code: 'STORE_READ_ONLY' } });
    await commit(owner, 'a', 2);
    expect(await owner.load('from-reader')).toBeUndefined();
    expect(owner.owner()).toMatchObject({ pid: process.pid });
  });

  it('takes a file over at once from a SIGKILLed owner on this host', async () => {
    const holder = startChild('hold');
    await holder.next((l) => l.committed === 3, 'three commits of the holder');
    holder.child.kill('SIGKILL');
    expect(await holder.exited).toBe('SIGKILL');
    const started = Date.now();
    const store = open(); // default heartbeat TTL of 10 s: the takeover must not wait for it
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(store.tookOver).toMatchObject({ reason: 'owner-dead', previous: { pid: holder.pid, host: hostname() } });
    const record = await store.load('held');
    await commit(store, 'held', record!.version + 1);
  });

  it('fences a paused owner: after a takeover past its heartbeat TTL, its next commit is refused with STORE_FENCED', async () => {
    const holder = startChild('hold', file, 300);
    await holder.next((l) => l.committed === 2, 'two commits of the holder');
    holder.child.kill('SIGSTOP');
    await vi.waitFor(async () => expect(await processState(holder.pid)).toBe('T'), { timeout: 5_000, interval: 20 });
    // Its pid is alive: until its heartbeat is 300 ms old the file stays its own.
    let store: SqliteStore | undefined;
    await vi.waitFor(
      () => {
        try {
          store = open({ ownerTtlMs: 300 });
        } catch (error) {
          expect(error).toMatchObject({ code: 'STORE_IN_USE', details: { pid: holder.pid } });
          throw error;
        }
      },
      { timeout: 5_000, interval: 50 },
    );
    expect(store!.tookOver).toMatchObject({ reason: 'heartbeat-stale', previous: { pid: holder.pid } });
    const before = (await store!.load('held'))!.version;
    await commit(store!, 'held', before + 1);

    holder.child.kill('SIGCONT');
    const refused = await holder.next((l) => 'error' in l, "the paused holder's next commit");
    expect(refused.error).toMatchObject({
      code: 'STORE_FENCED',
      message: expect.stringContaining(`taken over by process ${process.pid}`),
    });
    expect(await holder.exited).toBe('code 0');
    // Nothing of the holder landed after the takeover: the log is the new owner's.
    expect((await store!.load('held'))!.version).toBe(before + 1);
    expect((await store!.readEvents('held')).map((e) => e.seq)).toEqual(Array.from({ length: before + 1 }, (_, i) => i + 1));
  });

  it('does not count a copied file as owned: a process opens the copy at once while the original is owned', async () => {
    const owner = open();
    await commit(owner, 'a', 1);
    const copy = join(dir, 'copy.db');
    await copyFile(file, copy);
    await copyFile(`${file}-wal`, `${copy}-wal`);
    const other = startChild('try', copy);
    expect(await other.next((l) => 'opened' in l || 'error' in l, 'the copy to open')).toMatchObject({
      opened: true,
      tookOver: { reason: 'copied-file', previous: { pid: process.pid } },
    });
  });
});
