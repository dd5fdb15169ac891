import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createRuntime, type CommitRequest, type SessionStore } from '@flowing/runtime';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { loadMachine } from '../run/load.ts';
import { benchProvider } from './model.ts';

// Loaded like `flowing run` loads it (from the project's machines/), so the CLI build never compiles a machine.
const orderSupport = await loadMachine('order-support');

/** What one piece of work wrote: JSON bytes of the rows (record, events, journal) and bytes appended to the WAL. */
interface Written {
  json: number;
  record: number;
  events: number;
  journal: number;
  commits: number;
  wal: number;
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * Bytes an order-support session writes to SQLite: per applied 200 KB message, per refused 250 KB event, and on disk
 * per finished session (after a checkpoint and VACUUM). `node --conditions=@flowing/source --import tsx bin/bench/log-bytes.ts`
 */
async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-log-bytes-'));
  const file = join(dir, 'sessions.db');
  const inner = createSqliteStore({ file });
  const tally: Written = { json: 0, record: 0, events: 0, journal: 0, commits: 0, wal: 0 };
  const store: SessionStore = {
    ...inner,
    commit(request: CommitRequest) {
      tally.commits++;
      tally.record += bytes(request.record);
      tally.events += request.events.reduce((sum, event) => sum + bytes(event), 0);
      tally.journal += request.journal.reduce((sum, entry) => sum + bytes(entry), 0);
      return inner.commit(request);
    },
  };
  const side = new Database(file);
  const runtime = createRuntime({ machines: [orderSupport], store, llm: benchProvider() });
  async function measure(work: () => Promise<unknown>): Promise<Written> {
    side.pragma('wal_checkpoint(TRUNCATE)');
    Object.assign(tally, { json: 0, record: 0, events: 0, journal: 0, commits: 0, wal: 0 });
    await work();
    const wal = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    return { ...tally, json: tally.record + tally.events + tally.journal, wal };
  }
  const big = (size: number) => `where is my order A1001? ${'x'.repeat(size)}`;

  const session = await runtime.createSession(orderSupport);
  await session.send({ type: 'USER_MESSAGE', text: 'hello' });
  const applied = await measure(async () => {
    const result = await session.send({ type: 'USER_MESSAGE', text: big(200 * 1024) });
    if (!result.applied) throw new Error(`not applied: ${JSON.stringify(result).slice(0, 200)}`);
  });
  const refused = await measure(async () => {
    const result = await session.send({ type: 'REJECT', reason: 'y'.repeat(250 * 1024) });
    if (result.applied) throw new Error('applied');
  });

  // On disk: many finished sessions (one order question, then CANCEL), over the file of an empty store.
  const count = Number(process.env.SESSIONS ?? 200);
  side.pragma('wal_checkpoint(TRUNCATE)');
  side.exec('VACUUM');
  side.pragma('wal_checkpoint(TRUNCATE)');
  const empty = statSync(file).size;
  const tables = () =>
    new Map(
      side
        .prepare<[], { name: string; bytes: number }>('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name')
        .all()
        .map((r) => [r.name, r.bytes]),
    );
  const emptyTables = tables();
  for (let i = 0; i < count; i++) {
    const s = await runtime.createSession(orderSupport);
    await s.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    await s.send({ type: 'CANCEL' });
  }
  side.pragma('wal_checkpoint(TRUNCATE)');
  side.exec('VACUUM');
  side.pragma('wal_checkpoint(TRUNCATE)');
  const perSession = (statSync(file).size - empty) / count;
  const perTable = [...tables()].map(([name, n]) => `${name} ${Math.round((n - (emptyTables.get(name) ?? 0)) / count)}`).join(', ');
  const last = (await inner.listSessions({ limit: 1 })).sessions[0]!;
  const rows = await inner.readEvents(last.sessionId);
  const journal = await inner.readJournal(last.sessionId);
  const record = (await inner.load(last.sessionId))!;
  const byType = new Map<string, number>();
  for (const event of rows) byType.set(event.type, (byType.get(event.type) ?? 0) + bytes(event));

  const line = (name: string, w: Written) =>
    `${name}: ${w.json} B of JSON in ${w.commits} commits (record ${w.record}, events ${w.events}, journal ${w.journal}); WAL ${w.wal} B`;
  console.log(line('applied 200 KB message', applied));
  console.log(line('refused 250 KB event', refused));
  console.log(`finished session on disk: ${Math.round(perSession)} B per session (${count} sessions, after VACUUM): ${perTable}`);
  console.log(
    `  one of them as JSON: record ${bytes(record)} B, ${rows.length} events ${rows.reduce((s, e) => s + bytes(e), 0)} B, ${journal.length} journal entries ${journal.reduce((s, j) => s + bytes(j), 0)} B`,
  );
  console.log(`  events by type: ${[...byType].map(([type, n]) => `${type} ${n}`).join(', ')}`);
  side.close();
  await inner.close();
  await rm(dir, { recursive: true, force: true });
}

await main();
