import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { testEvents, testRecord } from '../helpers/stores.ts';

/** One writer per SQLite file, within one process: shared ownership, fencing, heartbeat, read-only stores. */

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
  for (const store of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

const commit = (store: SqliteStore, id: string, version: number) =>
  store.commit({
    expectedVersion: version - 1,
    record: testRecord(id, version, version),
    events: testEvents(id, version, version),
    journal: [],
  });

describe('SQLite store: ownership in one process', () => {
  it('shares the file between stores of one process, and gives it up when the last one closes', async () => {
    const a = open();
    const b = open();
    await commit(a, 'x', 1);
    await commit(b, 'x', 2);
    await a.close();
    expect(b.owner()).toMatchObject({ pid: process.pid });
    await commit(b, 'x', 3);
    await b.close();
    const reader = open({ readOnly: true });
    expect(reader.owner()).toBeUndefined();
  });

  it('fences at the commit: once another owner is stored, commits fail with STORE_FENCED, onFenced is told once, writeFailure says so', async () => {
    const fencedWith: Error[] = [];
    const store = open({ onFenced: (error) => fencedWith.push(error) });
    await commit(store, 'x', 1);
    // Another process took the file over (as after a pause past the TTL), written as it would write it.
    const raw = new Database(file);
    raw.prepare("UPDATE owner SET token = '1@1', pid = 1, host = 'elsewhere', heartbeat_at = ?").run(Date.now());
    raw.close();
    await expect(commit(store, 'x', 2)).rejects.toMatchObject({ code: 'STORE_FENCED', details: { file, pid: 1, host: 'elsewhere' } });
    await expect(commit(store, 'y', 1)).rejects.toMatchObject({ code: 'STORE_FENCED' });
    expect(fencedWith).toHaveLength(1);
    expect(store.writeFailure?.()).toMatchObject({ code: 'STORE_FENCED' });
    const check = open({ readOnly: true });
    expect((await check.load('x'))!.version).toBe(1);
    expect(await check.load('y')).toBeUndefined();
    // The store closes without deleting the owner row that is not its own.
    await store.close();
    expect(check.owner()).toMatchObject({ pid: 1, host: 'elsewhere' });
  });

  it('finds out from its heartbeat that it lost the file, without a commit', async () => {
    const fencedWith: Error[] = [];
    const store = open({ ownerTtlMs: 150, onFenced: (error) => fencedWith.push(error) });
    const raw = new Database(file);
    raw.prepare("UPDATE owner SET token = '1@1', pid = 1, host = 'elsewhere'").run();
    raw.close();
    await vi.waitFor(() => expect(fencedWith).toHaveLength(1), { timeout: 3_000, interval: 20 });
    expect(store.writeFailure?.()).toMatchObject({ code: 'STORE_FENCED' });
  });

  it('renews its heartbeat every third of the TTL', async () => {
    const store = open({ ownerTtlMs: 300 });
    const first = store.owner()!.heartbeatAt;
    await vi.waitFor(() => expect(store.owner()!.heartbeatAt).toBeGreaterThan(first), { timeout: 2_000, interval: 20 });
  });
});

describe('SQLite store: read-only', () => {
  it('reads without taking the file, never migrates, and refuses commits with STORE_READ_ONLY', async () => {
    const writer = open();
    await commit(writer, 'a', 1);
    await writer.close();
    const reader = open({ readOnly: true });
    expect(reader.readOnly).toBe(true);
    expect(reader.owner()).toBeUndefined();
    expect((await reader.listSessions()).sessions.map((s) => s.sessionId)).toEqual(['a']);
    await expect(commit(reader, 'b', 1)).rejects.toMatchObject({ code: 'STORE_READ_ONLY', message: expect.stringContaining(file) });
    // A writer may open beside it at once.
    const next = open();
    expect(next.tookOver).toBeUndefined();
    await commit(next, 'a', 2);
    expect((await reader.load('a'))!.version).toBe(2);
  });

  it('refuses a file that does not exist (it never creates one) and a schema older than it can read', async () => {
    expect(() => open({ readOnly: true })).toThrowError(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', details: { file, missing: true } }),
    );
    await open().close();
    const raw = new Database(file);
    raw.pragma('user_version = 1');
    raw.close();
    expect(() => open({ readOnly: true })).toThrowError(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('schema version 1') }),
    );
  });

  it('adds the owner table to a file of schema 2 when a writer opens it', async () => {
    await open().close();
    const raw = new Database(file);
    raw.exec('DROP TABLE owner');
    raw.pragma('user_version = 2');
    raw.close();
    // A reader reads schema 2 as it is.
    const reader = open({ readOnly: true });
    expect(reader.owner()).toBeUndefined();
    await reader.close();
    const writer = open();
    expect(writer.owner()).toMatchObject({ pid: process.pid });
    const check = new Database(file, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(3);
    check.close();
  });
});

describe('flowing sessions on a SQLite file', () => {
  it('lists read-only beside the owner, and says 0 sessions for a file nothing was stored in yet (without creating it)', async () => {
    const { sessionsCommand } = await import('../../bin/serve/sessions.ts');
    const lines: string[] = [];
    const errors: string[] = [];
    const io = { out: (line: string) => lines.push(line), err: (line: string) => errors.push(line) };
    expect(await sessionsCommand({ store: `sqlite:${file}`, ...io })).toBe(0);
    expect(lines).toEqual([expect.stringMatching(/^0 session\(s\) \(.*does not exist: nothing was stored there yet/)]);
    expect(existsSync(file)).toBe(false);

    const owner = open();
    await commit(owner, 'listed', 1);
    lines.length = 0;
    expect(await sessionsCommand({ store: `sqlite:${file}`, json: true, ...io })).toBe(0);
    expect(lines.map((l) => JSON.parse(l).sessionId)).toEqual(['listed']);
    expect(errors).toEqual([]);
    expect(owner.owner()).toMatchObject({ pid: process.pid });
    await commit(owner, 'listed', 2);
  });
});
