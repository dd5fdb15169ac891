import { toFlowError, type SessionStatus, type SessionSummary } from '@flowing/runtime';
import { openServeStore } from './store.ts';

const STATUSES: readonly SessionStatus[] = ['running', 'waiting', 'done', 'error', 'cancelled', 'needs_attention'];

export interface SessionsCommandOptions {
  status?: string;
  machine?: string;
  store?: string;
  json?: boolean;
  /** Most sessions to list (default 100). */
  limit?: string;
  /** Only sessions recorded under another machine version that do not continue on the served one, with the reasons. */
  stale?: boolean;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/**
 * `flowing sessions`: the stored sessions, newest first, one line each (or JSON lines). Exit 0, or 2 for a usage
 * error (unknown status, unusable store).
 */
export async function sessionsCommand(options: SessionsCommandOptions = {}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  const usage = (code: string, message: string) => {
    err(`error ${code}: ${message}`);
    return 2;
  };
  const statuses = options.status ? options.status.split(',').map((s) => s.trim()) : undefined;
  for (const status of statuses ?? []) {
    if (!(STATUSES as readonly string[]).includes(status))
      return usage('SESSIONS_BAD_STATUS', `--status takes ${STATUSES.join(', ')} (comma-separated), not '${status}'`);
  }
  const limit = options.limit === undefined ? 100 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1)
    return usage('SESSIONS_BAD_LIMIT', `--limit must be a positive integer, not '${options.limit}'`);

  if (options.stale) {
    const { formatStale, withVersionedRuntime } = await import('./migrate.ts');
    return withVersionedRuntime({ ...(options.store ? { store: options.store } : {}), err, readOnly: true }, async (runtime) => {
      const stale = await runtime.staleSessions({ ...(options.machine ? { machineId: options.machine } : {}), limit });
      for (const s of stale) out(options.json ? JSON.stringify(s) : formatStale(s));
      if (!options.json) out(`${stale.length} stale session(s)`);
      return 0;
    });
  }
  let opened;
  try {
    // Read-only: listing works beside a running server that owns the file, and never writes it.
    opened = await openServeStore(options.store, err, { readOnly: true });
  } catch (error) {
    const flow = toFlowError(error);
    if ((flow.details as { missing?: unknown } | undefined)?.missing === true) {
      if (!options.json) out(`0 session(s) (${flow.message})`);
      return 0;
    }
    return usage(flow.code, flow.message);
  }
  try {
    const listed: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await opened.store.listSessions({
        ...(statuses ? { status: statuses as SessionStatus[] } : {}),
        ...(options.machine ? { machineId: options.machine } : {}),
        limit: Math.min(500, limit - listed.length),
        ...(cursor ? { cursor } : {}),
      });
      listed.push(...page.sessions);
      cursor = page.nextCursor;
    } while (cursor && listed.length < limit);
    for (const s of listed) out(options.json ? JSON.stringify(s) : formatSummary(s));
    if (!options.json) out(`${listed.length} session(s)${cursor ? ' (more: raise --limit)' : ''}`);
    return 0;
  } catch (error) {
    const flow = toFlowError(error);
    return usage(flow.code, flow.message);
  } finally {
    await opened.close();
  }
}

function formatSummary(s: SessionSummary): string {
  const flag = s.awaitingApproval ? '  awaiting approval' : '';
  return `${s.sessionId}  ${s.machineId}  ${s.status}  events ${s.seq}  updated ${new Date(s.updatedAt).toISOString()}${flag}`;
}
