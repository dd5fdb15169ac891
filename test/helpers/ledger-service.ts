/**
 * A fake external service run as its own process: the source of truth for side effects in the crash tests
 * (RELIABILITY.md "Harness"). Every request is written to its own SQLite file (WAL, synchronous=FULL) before it is
 * answered, so a runtime killed mid-call cannot take the record with it, and the ledger outlives every runtime.
 *
 *   POST /call/:tool   body { args }, header Idempotency-Key; recorded at arrival (the side effect happens then),
 *                      answered after the configured delay with { requestId, tool, key }
 *   PUT  /config       body { delayMs } — how long calls take from now on (to land kills mid-call)
 *   GET  /requests     ?after=<id> — recorded requests in arrival order
 *
 * Usage: node --import tsx ledger-service.ts <sqlite file>; prints `LEDGER http://127.0.0.1:<port>` when listening,
 * then `CALL <id> <tool>` for every call once it is recorded (before its answer).
 */
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const file = process.argv[2];
if (!file) {
  console.error('usage: ledger-service.ts <sqlite file>');
  process.exit(2);
}

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
db.exec(`CREATE TABLE IF NOT EXISTS requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tool TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  args TEXT NOT NULL,
  at INTEGER NOT NULL
)`);
const insert = db.prepare('INSERT INTO requests (tool, idempotency_key, args, at) VALUES (?, ?, ?, ?)');
const select = db.prepare<[number], { id: number; tool: string; idempotency_key: string; args: string; at: number }>(
  'SELECT * FROM requests WHERE id > ? ORDER BY id',
);

let delayMs = 0;
const app = new Hono();

app.post('/call/:tool', async (c) => {
  const key = c.req.header('idempotency-key');
  if (!key) return c.json({ code: 'LEDGER_NO_KEY', message: 'every call carries an Idempotency-Key header' }, 400);
  const body = (await c.req.json().catch(() => null)) as { args?: unknown } | null;
  if (!body || typeof body !== 'object') return c.json({ code: 'LEDGER_BAD_BODY', message: 'the body is a JSON object { args }' }, 400);
  const { lastInsertRowid } = insert.run(c.req.param('tool'), key, JSON.stringify(body.args ?? null), Date.now());
  process.stdout.write(`CALL ${Number(lastInsertRowid)} ${c.req.param('tool')}\n`);
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  return c.json({ requestId: Number(lastInsertRowid), tool: c.req.param('tool'), key });
});

app.put('/config', async (c) => {
  const body = (await c.req.json()) as { delayMs?: unknown };
  if (typeof body.delayMs !== 'number' || body.delayMs < 0)
    return c.json({ code: 'LEDGER_BAD_CONFIG', message: 'delayMs is a non-negative number' }, 400);
  delayMs = body.delayMs;
  return c.json({ delayMs });
});

app.get('/requests', (c) => {
  const after = Number(c.req.query('after') ?? 0);
  const rows = select.all(Number.isInteger(after) ? after : 0);
  return c.json({ requests: rows.map((r) => ({ id: r.id, tool: r.tool, key: r.idempotency_key, args: JSON.parse(r.args), at: r.at })) });
});

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`LEDGER http://127.0.0.1:${port}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    server.close(() => {
      db.close();
      process.exit(0);
    });
  });
}
