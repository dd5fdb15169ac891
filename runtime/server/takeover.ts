import type { Runtime } from '../runtime.ts';
import { toFlowError } from '../errors.ts';
import type { SessionPage, SessionQuery, SessionStore } from '../store/types.ts';
import type { ServerLogger } from './log.ts';
import { recoverSessions, type RecoveryReport } from './recover.ts';

const RETRY_FAILED_MS = 60_000;

/** A running takeover scan: the report of its first pass (start-up recovery) and how to stop it. */
export interface Takeover {
  first: Promise<RecoveryReport>;
  stop(): void;
}

/** Scan interval for a lease TTL: often enough that a dead holder's sessions are taken over within TTL + 1 s. */
export function takeoverIntervalMs(ttlMs: number): number {
  return Math.min(1_000, Math.max(50, Math.floor(ttlMs / 4)));
}

/**
 * With a store shared between processes (one that has leases), start-up recovery and takeover are one job: every
 * `intervalMs` (and once at start), the sessions stored as `running` whose lease nobody holds — their process died
 * or was cut off mid-step — are recovered exactly as a restart recovers them (`recoverSessions`: recorded results
 * delivered, idempotent calls re-run, a non-idempotent call in flight to `needs_attention`). Sessions another live
 * process is stepping are never touched: their lease is held.
 */
export function startTakeover(runtime: Runtime, log: ServerLogger, intervalMs?: number): Takeover {
  const leases = runtime.store.leases;
  if (!leases) throw new TypeError('startTakeover needs a store with leases (e.g. Redis)');
  const every = intervalMs ?? takeoverIntervalMs(leases.ttlMs);
  // A session that cannot be resumed (its machine changed) is logged once a minute, not on every pass.
  const failedAt = new Map<string, number>();
  let firstPass = true;
  // recoverSessions pages through the `running` sessions (here: the orphans only) and the `waiting` ones (for their
  // timers: looked at on the first pass, as a restart does; later, whoever stores or opens one arms its timers).
  const orphanStore: SessionStore = Object.assign(Object.create(runtime.store) as SessionStore, {
    listSessions: async (query?: SessionQuery): Promise<SessionPage> => {
      if (query?.status !== 'running') return firstPass ? runtime.store.listSessions(query) : { sessions: [] };
      const page = await leases.orphans(query?.cursor);
      const now = Date.now();
      return { ...page, sessions: page.sessions.filter((s) => !(now - (failedAt.get(s.sessionId) ?? -Infinity) < RETRY_FAILED_MS)) };
    },
  });
  const orphanView: Runtime = {
    ...runtime,
    store: orphanStore,
    async resume(sessionId) {
      try {
        return await runtime.resume(sessionId, { leaseWaitMs: 0 });
      } catch (error) {
        // Another process took it between the scan and now: it is recovered there.
        if (toFlowError(error).code === 'SESSION_LEASED') return runtime.session(sessionId);
        failedAt.set(sessionId, Date.now());
        throw error;
      }
    },
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const pass = () =>
    recoverSessions(orphanView, log).finally(() => {
      firstPass = false;
    });
  const schedule = () => {
    if (stopped) return;
    // Jitter keeps the processes sharing a Redis from scanning in lockstep.
    timer = setTimeout(
      () => {
        pass()
          .catch((error: unknown) => {
            log({ level: 'error', code: 'SERVER_RECOVERY_FAILED', message: `the takeover scan failed: ${toFlowError(error).message}` });
          })
          .finally(schedule);
      },
      every * (0.8 + Math.random() * 0.4),
    );
    timer.unref();
  };
  const first = pass().finally(schedule);
  return {
    first,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
