/**
 * A process that opens a SQLite session file, for the one-writer tests: `node sqlite-owner-child.ts <mode> <file>
 * [ownerTtlMs]`. Each line it prints is one JSON object.
 * - `try`: opens the file for writing; prints `{ opened: true, tookOver? }` or `{ error: { code, message, details } }`, exits.
 * - `hold`: opens it for writing, prints `{ opened: true }`, then commits one event every 20 ms to session `held` and
 *   prints `{ committed: seq }` for each, until a commit fails: it prints `{ error }` and exits.
 * - `read`: opens it read-only, prints `{ sessions: [ids], owner }`, tries one commit, prints `{ error }`, exits.
 */
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { testEvents, testRecord } from './stores.ts';

const [mode, file, ttl] = process.argv.slice(2);
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const errorOf = (error: unknown) => {
  const { code, message, details } = error as { code?: string; message?: string; details?: unknown };
  return { code, message, details };
};

let store: SqliteStore;
try {
  store = createSqliteStore({ file: file!, readOnly: mode === 'read', ...(ttl ? { ownerTtlMs: Number(ttl) } : {}) });
} catch (error) {
  print({ error: errorOf(error) });
  process.exit(0);
}

if (mode === 'try') {
  print({ opened: true, ...(store.tookOver ? { tookOver: store.tookOver } : {}) });
  await store.close();
} else if (mode === 'read') {
  const { sessions } = await store.listSessions();
  print({ sessions: sessions.map((s) => s.sessionId), owner: store.owner() });
  try {
    await store.commit({
      expectedVersion: 0,
      record: testRecord('from-reader', 1, 1),
      events: testEvents('from-reader', 1, 1),
      journal: [],
    });
    print({ committed: 1 });
  } catch (error) {
    print({ error: errorOf(error) });
  }
  await store.close();
} else if (mode === 'hold') {
  print({ opened: true });
  const existing = await store.load('held');
  let version = existing?.version ?? 0;
  for (;;) {
    try {
      await store.commit({
        expectedVersion: version,
        record: testRecord('held', version + 1, version + 1),
        events: testEvents('held', version + 1, version + 1),
        journal: [],
      });
      version += 1;
      print({ committed: version });
    } catch (error) {
      print({ error: errorOf(error) });
      process.exit(0);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
