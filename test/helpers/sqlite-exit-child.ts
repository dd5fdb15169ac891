/**
 * Commits one session to the SQLite store in argv[2] and ends without closing the store: the process must stay up
 * until the commit is on disk, and must then exit on its own (nothing of an idle store keeps it alive).
 */
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { testEvents, testRecord } from './stores.ts';

const store = createSqliteStore({ file: process.argv[2]! });
void store
  .commit({ expectedVersion: 0, record: testRecord('left-open', 1, 3), events: testEvents('left-open', 1, 3), journal: [] })
  .then(() => process.stdout.write('COMMITTED\n'));
