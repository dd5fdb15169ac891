import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type RuntimeEvent } from '@flowing/runtime';
import { createSqliteStore, DEFAULT_SQLITE_FILE, type SqliteStore } from '@flowing/runtime/sqlite';
import { singleToolMachine } from '../helpers/runtime-machines.ts';
import { testEvents, testRecord } from '../helpers/stores.ts';

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

let dir: string;
const opened: SqliteStore[] = [];
const open = (options: Parameters<typeof createSqliteStore>[0] = {}) => {
  const store = createSqliteStore({ file: join(dir, 'sessions.db'), ...options });
  opened.push(store);
  return store;
};
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-sqlite-'));
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `n` RUN events through a session on `store`; returns its id. */
async function runSession(store: SqliteStore, n: number): Promise<string> {
  const machine = singleToolMachine(echo);
  const runtime = createRuntime({ machines: [machine], store, warmSessions: 0 });
  const session = await runtime.createSession(machine);
  for (let i = 1; i <= n; i++) expect(await session.send({ type: 'RUN', args: { n: i } })).toMatchObject({ applied: true });
  return session.id;
}

describe('SQLite store: where and how it opens', () => {
  it('keeps sessions in .flowing/sessions.db of the project by default, creating the folder', async () => {
    const store = createSqliteStore({ projectDir: dir });
    opened.push(store);
    expect(store.file).toBe(join(dir, DEFAULT_SQLITE_FILE));
    expect(existsSync(join(dir, '.flowing', 'sessions.db'))).toBe(true);
  });

  it('D6: sets WAL, synchronous=FULL and busy_timeout >= 5000 on a fresh file and again on every reopen', async () => {
    const fresh = open();
    expect(fresh.settings()).toEqual({ journalMode: 'wal', synchronous: 2, busyTimeoutMs: 5_000 });
    await runSession(fresh, 1);
    await fresh.close();
    // What a connection that sets nothing gets on the existing WAL file: NORMAL (1), which is why every open sets FULL.
    const raw = new Database(join(dir, 'sessions.db'));
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('synchronous', { simple: true })).toBe(1);
    raw.close();
    for (let i = 0; i < 3; i++) {
      const reopened = open();
      expect(reopened.settings()).toEqual({ journalMode: 'wal', synchronous: 2, busyTimeoutMs: 5_000 });
      await reopened.close();
    }
    expect(open({ synchronous: 'EXTRA', busyTimeoutMs: 12_000 }).settings()).toEqual({
      journalMode: 'wal',
      synchronous: 3,
      busyTimeoutMs: 12_000,
    });
  });

  it('refuses an unknown synchronous level and a group size that is not a whole number >= 1 with STORE_BAD_OPTIONS', () => {
    expect(() => open({ synchronous: 'SOMETIMES' as never })).toThrowError(expect.objectContaining({ code: 'STORE_BAD_OPTIONS' }));
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => open({ maxCommitsPerTransaction: bad })).toThrowError(
        expect.objectContaining({ code: 'STORE_BAD_OPTIONS', message: expect.stringContaining('maxCommitsPerTransaction') }),
      );
    }
  });

  it('versions its schema in user_version and refuses a file from a newer schema with STORE_SCHEMA_TOO_NEW', async () => {
    await open().close();
    const raw = new Database(join(dir, 'sessions.db'));
    expect(raw.pragma('user_version', { simple: true })).toBe(3);
    raw.pragma('user_version = 7');
    raw.close();
    expect(() => open()).toThrowError(
      expect.objectContaining({ code: 'STORE_SCHEMA_TOO_NEW', message: expect.stringContaining('schema version 7') }),
    );
  });

  it('migrates a file of schema 1: the parents of its child sessions are listed after the upgrade', async () => {
    const first = open();
    const parent = { sessionId: 'p', state: 'billing', callId: 'billing@2', depth: 1 };
    await first.commit({ expectedVersion: 0, record: testRecord('p', 1, 2), events: testEvents('p', 1, 2), journal: [] });
    await first.commit({
      expectedVersion: 0,
      record: testRecord('p_billing_2', 1, 2, { parent }),
      events: testEvents('p_billing_2', 1, 2),
      journal: [],
    });
    await first.close();
    // The file as schema 1 wrote it: no parent column, no owner table.
    const raw = new Database(join(dir, 'sessions.db'));
    raw.exec('ALTER TABLE sessions DROP COLUMN parent_id');
    raw.exec('DROP TABLE owner');
    raw.pragma('user_version = 1');
    raw.close();
    const upgraded = open();
    const { sessions } = await upgraded.listSessions();
    expect(sessions.map((s) => [s.sessionId, s.parentId])).toEqual([
      ['p_billing_2', 'p'],
      ['p', undefined],
    ]);
    expect(await upgraded.load('p_billing_2')).toMatchObject({ parent });
  });

  it('refuses a file that is not a SQLite database with FLOW_STORE_CORRUPT naming the file', async () => {
    await writeFile(join(dir, 'sessions.db'), 'this is not a database, it is a text file long enough to have a header'.repeat(20));
    expect(() => open()).toThrowError(
      expect.objectContaining({ code: 'FLOW_STORE_CORRUPT', message: expect.stringContaining('sessions.db') }),
    );
  });

  it('writes a commit in one transaction: a second connection sees all of it or none of it', async () => {
    const writer = open();
    const reader = open();
    await writer.commit({
      expectedVersion: 0,
      record: testRecord('one', 1, 3),
      events: testEvents('one', 1, 3),
      journal: [{ key: 'k@1', kind: 'tool', name: 't', idempotent: false, startedAt: 1 }],
    });
    expect((await reader.load('one'))!.version).toBe(1);
    expect(await reader.readEvents('one')).toHaveLength(3);
    expect(await reader.readJournal('one')).toHaveLength(1);
    // A commit that fails half-way (its second event collides with a row written behind the store's back) leaves nothing.
    const raw = new Database(join(dir, 'sessions.db'));
    raw.prepare('INSERT INTO events (session_id, seq, body, body_check) VALUES (?, ?, ?, ?)').run('one', 5, '{}', 'x');
    raw.close();
    await expect(
      writer.commit({
        expectedVersion: 1,
        record: testRecord('one', 2, 5),
        events: testEvents('one', 4, 5),
        journal: [{ key: 'k@2', kind: 'tool', name: 't', idempotent: false, startedAt: 2 }],
      }),
    ).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect((await reader.load('one'))!.version).toBe(1);
    expect(await reader.readJournal('one')).toHaveLength(1);
    const check = new Database(join(dir, 'sessions.db'), { readonly: true });
    expect(check.prepare('SELECT seq FROM events WHERE session_id = ? ORDER BY seq').all('one')).toEqual([
      { seq: 1 },
      { seq: 2 },
      { seq: 3 },
      { seq: 5 },
    ]);
    check.close();
  });

  it('feeds events another connection commits to a follower, once each and in order', async () => {
    const a = open({ pollMs: 5 });
    const b = open();
    await b.commit({ expectedVersion: 0, record: testRecord('fed', 1, 2), events: testEvents('fed', 1, 2), journal: [] });
    const seen: number[] = [];
    const stop = a.follow!('fed', 1, (events) => seen.push(...events.map((e) => e.seq)));
    await b.commit({ expectedVersion: 1, record: testRecord('fed', 2, 4), events: testEvents('fed', 3, 4), journal: [] });
    await new Promise((resolve) => setTimeout(resolve, 60));
    await b.commit({ expectedVersion: 2, record: testRecord('fed', 3, 5), events: testEvents('fed', 5, 5), journal: [] });
    await new Promise((resolve) => setTimeout(resolve, 60));
    stop();
    await b.commit({ expectedVersion: 3, record: testRecord('fed', 4, 6), events: testEvents('fed', 6, 6), journal: [] });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(seen).toEqual([2, 3, 4, 5]);
  });
});

describe('D9: a damaged store', () => {
  /** Changes one character of a stored text column in place, the way a flipped bit on disk would. */
  function flipByte(table: 'sessions' | 'events', column: 'record' | 'body', where: string, params: unknown[]) {
    const raw = new Database(join(dir, 'sessions.db'));
    const row = raw.prepare(`SELECT ${column} AS text FROM ${table} WHERE ${where}`).get(...params) as { text: string };
    const at = row.text.indexOf('"idle"') >= 0 ? row.text.indexOf('"idle"') + 1 : Math.floor(row.text.length / 2);
    const flipped = row.text.slice(0, at) + String.fromCharCode(row.text.charCodeAt(at) ^ 1) + row.text.slice(at + 1);
    raw.prepare(`UPDATE ${table} SET ${column} = ? WHERE ${where}`).run(flipped, ...params);
    raw.close();
  }

  it('refuses the session whose record has a flipped byte with FLOW_STORE_CORRUPT naming it, and loads the others', async () => {
    const store = open();
    const damaged = await runSession(store, 2);
    const healthy = await runSession(store, 2);
    flipByte('sessions', 'record', 'session_id = ?', [damaged]);
    await expect(store.load(damaged)).rejects.toMatchObject({
      code: 'FLOW_STORE_CORRUPT',
      details: { sessionId: damaged },
      message: expect.stringContaining(damaged),
    });
    expect((await store.load(healthy))!.seq).toBeGreaterThan(0);
    // Through the runtime: the damaged session is refused with the code, the healthy one goes on.
    const machine = singleToolMachine(echo);
    const runtime = createRuntime({ machines: [machine], store });
    await expect(runtime.session(damaged).send({ type: 'RUN', args: { n: 3 } })).rejects.toMatchObject({ code: 'FLOW_STORE_CORRUPT' });
    expect(await runtime.session(healthy).send({ type: 'RUN', args: { n: 3 } })).toMatchObject({ applied: true });
    expect((await store.listSessions()).sessions.map((s) => s.sessionId).sort()).toEqual([damaged, healthy].sort());
  });

  it('refuses reading a log with a flipped byte in one event, naming the session and the event, and reads the others', async () => {
    const store = open();
    const damaged = await runSession(store, 2);
    const healthy = await runSession(store, 2);
    flipByte('events', 'body', 'session_id = ? AND seq = 3', [damaged]);
    await expect(store.readEvents(damaged)).rejects.toMatchObject({
      code: 'FLOW_STORE_CORRUPT',
      message: expect.stringMatching(/event 3 of session/),
    });
    expect((await store.readEvents(damaged, 0, 2)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await store.readEvents(healthy)).length).toBeGreaterThan(3);
  });

  it('after the WAL tail is cut, opens at the last whole commit: record and log agree, nothing half-written', async () => {
    const store = open();
    const id = await runSession(store, 6);
    const full = await store.readEvents(id);
    // Copy the database as a crash would leave it: the main file and the WAL, never checkpointed.
    const crashed = join(dir, 'crashed');
    await rm(crashed, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(crashed));
    await copyFile(join(dir, 'sessions.db'), join(crashed, 'sessions.db'));
    await copyFile(join(dir, 'sessions.db-wal'), join(crashed, 'sessions.db-wal'));
    const walSize = (await stat(join(crashed, 'sessions.db-wal'))).size;
    expect(walSize).toBeGreaterThan(8_000);
    await truncate(join(crashed, 'sessions.db-wal'), walSize - 3_000);
    const reopened = createSqliteStore({ file: join(crashed, 'sessions.db') });
    opened.push(reopened);
    const record = await reopened.load(id);
    const log = await reopened.readEvents(id);
    expect(record).toBeDefined();
    expect(record!.seq).toBe(log.length);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.length).toBeLessThan(full.length);
    expect(log).toEqual(full.slice(0, log.length) as RuntimeEvent[]);
    // And it goes on from there.
    const machine = singleToolMachine(echo);
    const runtime = createRuntime({ machines: [machine], store: reopened });
    expect(await runtime.session(id).send({ type: 'RUN', args: { n: 7 } })).toMatchObject({ applied: true });
  });
});

describe('SQLite store: group commit', () => {
  /** Frames in the WAL file now (a passive checkpoint reports them), read through a connection of its own. */
  function walFrames(): number {
    const raw = new Database(join(dir, 'sessions.db'));
    try {
      const [row] = raw.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
      return row!.log;
    } finally {
      raw.close();
    }
  }

  it('writes the commits of 50 sessions asked for in one turn as one transaction, and each is stored whole', async () => {
    const grouped = open();
    walFrames(); // checkpoint what opening wrote
    const ids = Array.from({ length: 50 }, (_, i) => `s${i}`);
    await Promise.all(
      ids.map((id) => grouped.commit({ expectedVersion: 0, record: testRecord(id, 1, 2), events: testEvents(id, 1, 2), journal: [] })),
    );
    const groupedFrames = walFrames();
    await grouped.close();
    // The same commits one transaction each rewrite the same pages 50 times over.
    const single = open({ maxCommitsPerTransaction: 1 });
    await Promise.all(
      ids.map((id) => single.commit({ expectedVersion: 1, record: testRecord(id, 2, 4), events: testEvents(id, 3, 4), journal: [] })),
    );
    const singleFrames = walFrames();
    expect(groupedFrames).toBeGreaterThan(0);
    expect(singleFrames).toBeGreaterThan(groupedFrames * 5);
    for (const id of ids) {
      expect((await single.load(id))!.version).toBe(2);
      expect((await single.readEvents(id)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    }
  });

  it('rolls back only the refused commit of a group: the others land, and it rejects with its own code', async () => {
    const store = open();
    await store.commit({ expectedVersion: 0, record: testRecord('taken', 1, 1), events: testEvents('taken', 1, 1), journal: [] });
    const results = await Promise.allSettled([
      store.commit({ expectedVersion: 0, record: testRecord('a', 1, 1), events: testEvents('a', 1, 1), journal: [] }),
      // Stale: 'taken' is at version 1 already.
      store.commit({
        expectedVersion: 0,
        record: testRecord('taken', 1, 2),
        events: testEvents('taken', 1, 2),
        journal: [{ key: 'k@1', kind: 'tool', name: 't', idempotent: false, startedAt: 1 }],
      }),
      store.commit({ expectedVersion: 0, record: testRecord('b', 1, 1), events: testEvents('b', 1, 1), journal: [] }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'STORE_CONFLICT' });
    const reader = open();
    expect((await reader.load('a'))!.version).toBe(1);
    expect((await reader.load('b'))!.version).toBe(1);
    expect((await reader.load('taken'))!.seq).toBe(1);
    expect(await reader.readEvents('taken')).toHaveLength(1);
    expect(await reader.readJournal('taken')).toEqual([]);
  });

  it('applies two commits of one session in one group in the order they were asked for', async () => {
    const store = open();
    await Promise.all([
      store.commit({ expectedVersion: 0, record: testRecord('seq', 1, 2), events: testEvents('seq', 1, 2), journal: [] }),
      store.commit({ expectedVersion: 1, record: testRecord('seq', 2, 3), events: testEvents('seq', 3, 3), journal: [] }),
    ]);
    expect((await open().readEvents('seq')).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('writes commits asked for before close, and refuses later ones with STORE_CLOSED', async () => {
    const store = open();
    const asked = store.commit({ expectedVersion: 0, record: testRecord('late', 1, 1), events: testEvents('late', 1, 1), journal: [] });
    await store.close();
    await expect(asked).resolves.toBeUndefined();
    await expect(
      store.commit({ expectedVersion: 1, record: testRecord('late', 2, 2), events: testEvents('late', 2, 2), journal: [] }),
    ).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    expect((await open().load('late'))!.version).toBe(1);
  });
});

describe('SQLite store: a process that never closes it', () => {
  it('keeps a process that committed and never closed the store up until the commit is on disk, then lets it exit', async () => {
    const file = join(dir, 'sessions.db');
    const child = spawn(
      process.execPath,
      [
        '--conditions=@flowing/source',
        '--import',
        import.meta.resolve('tsx'),
        fileURLToPath(new URL('../helpers/sqlite-exit-child.ts', import.meta.url)),
        file,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exit = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(-1);
      }, 20_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(exit).toBe(0);
    expect(out).toBe('COMMITTED\n');
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT version FROM sessions WHERE session_id = ?').get('left-open')).toEqual({ version: 1 });
    expect(check.prepare('SELECT count(*) AS n FROM events WHERE session_id = ?').get('left-open')).toEqual({ n: 3 });
    check.close();
  });
});
