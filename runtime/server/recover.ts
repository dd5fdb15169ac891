import type { Runtime } from '../runtime.ts';
import { toFlowError } from '../errors.ts';
import type { ServerLogger } from './log.ts';

/** What `recoverSessions` did: sessions resumed, and those it could not resume with the code why. */
export interface RecoveryReport {
  resumed: string[];
  failed: Array<{ sessionId: string; code: string; message: string }>;
}

/**
 * Resumes every session a previous process left mid-step (status `running`): recorded call results are delivered from
 * the journal, an idempotent call in flight runs again, a non-idempotent one puts the session in `needs_attention`
 * (the runtime decides; see DESIGN "Nothing lost"). Waiting sessions with an `after` timer pending are resumed too:
 * their timers are armed again with the time left, and one that fell due while no process ran fires at once.
 * Sessions are resumed `concurrency` at a time; a session that cannot be resumed (its machine changed or is gone) is
 * logged with its code and left as it is.
 */
export async function recoverSessions(runtime: Runtime, log: ServerLogger, concurrency = 8): Promise<RecoveryReport> {
  const report: RecoveryReport = { resumed: [], failed: [] };
  const ids = await listSessionIds(runtime, 'running');
  // Only the record says whether a waiting session has a timer; the listing does not.
  for (const sessionId of await listSessionIds(runtime, 'waiting')) {
    if ((await runtime.store.load(sessionId))?.timers) ids.push(sessionId);
  }
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const sessionId = ids[next++]!;
      try {
        await runtime.resume(sessionId);
        report.resumed.push(sessionId);
      } catch (error) {
        const flow = toFlowError(error, 'SERVER_RECOVERY_FAILED');
        report.failed.push({ sessionId, code: flow.code, message: flow.message });
        log({
          level: 'error',
          code: flow.code,
          message: `session ${sessionId} was left mid-step and could not be resumed: ${flow.message}`,
          sessionId,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
  if (ids.length > 0) {
    log({
      level: 'info',
      code: 'SERVER_RECOVERED',
      message: `resumed ${report.resumed.length} of ${ids.length} session(s) left mid-step or waiting for a timer`,
      failed: report.failed.length,
    });
  }
  return report;
}

async function listSessionIds(runtime: Runtime, status: 'running' | 'waiting'): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await runtime.store.listSessions({ status, limit: 500, ...(cursor ? { cursor } : {}) });
    ids.push(...page.sessions.map((s) => s.sessionId));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}
