import { activeStatePaths, type StaleInfo } from '@flowing/protocol';
import type { MachineInfo } from '../session/machine-info.ts';
import type { SessionRecord, SessionStore, SessionSummary } from '../store/types.ts';
import { CONTINUING_STATUSES, planFor } from './carry.ts';
import type { AnyMigrationHook } from './hook.ts';

export type { StaleInfo };

/** A session listed by `staleSessions`: its summary and why it does not continue on the served version. */
export type StaleSession = SessionSummary & { stale: StaleInfo };

/** Where the listing finds machines and hooks. */
export interface VersionScope {
  store: SessionStore;
  machine(machineId: string): MachineInfo | undefined;
  hook(machineId: string): AnyMigrationHook | undefined;
}

/** Most sessions one listing looks at (each is loaded); a larger store is listed in pages by `machineId`. */
const MAX_SCANNED = 10_000;

/**
 * Every stored session that still takes events and whose recorded version is not the one served, visited once, with
 * its record: the sessions a version change concerns. Sessions of machines not served are skipped.
 */
async function* olderVersions(
  scope: VersionScope,
  machineId?: string,
): AsyncGenerator<{ summary: SessionSummary; record: SessionRecord; info: MachineInfo }> {
  let cursor: string | undefined;
  let scanned = 0;
  do {
    const page = await scope.store.listSessions({
      status: CONTINUING_STATUSES,
      ...(machineId ? { machineId } : {}),
      limit: 500,
      ...(cursor ? { cursor } : {}),
    });
    for (const summary of page.sessions) {
      if (++scanned > MAX_SCANNED) return;
      const info = scope.machine(summary.machineId);
      if (!info) continue;
      const record = await scope.store.load(summary.sessionId);
      if (!record || record.specHash === info.definition.specHash) continue;
      yield { summary, record, info };
    }
    cursor = page.nextCursor;
  } while (cursor);
}

/**
 * The sessions recorded under another version that do not continue on the served one as they are, each with the
 * reasons (state removed, field type changed, call in flight in a changed invoke ...) and whether the machine's
 * migration hook carries it over. Sessions that fit the new version are not listed: their next event continues them.
 */
export async function listStaleSessions(scope: VersionScope, query: { machineId?: string; limit?: number } = {}): Promise<StaleSession[]> {
  const limit = query.limit ?? 500;
  const out: StaleSession[] = [];
  for await (const { summary, record, info } of olderVersions(scope, query.machineId)) {
    const plain = await planFor(scope.store, record, info);
    if (plain.ok) continue;
    const hook = scope.hook(record.machineId);
    const withHook = hook ? await planFor(scope.store, record, info, hook) : plain;
    out.push({
      ...summary,
      stale: {
        fromVersion: plain.fromVersion,
        toVersion: plain.toVersion,
        activeStates: plain.activeStates,
        reasons: plain.reasons,
        migratable: withHook.ok,
      },
    });
    if (out.length >= limit) break;
  }
  return out;
}

/** The sessions of older versions, for `migrate`: each with its record and machine. */
export { olderVersions };

/**
 * How many sessions of a machine that still take events are in each active state path (a parallel state counts once
 * per region): what the studio asks before a save, to warn when the edit removes a state sessions wait in.
 */
export async function countByState(store: SessionStore, machineId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let cursor: string | undefined;
  let scanned = 0;
  do {
    const page = await store.listSessions({ status: CONTINUING_STATUSES, machineId, limit: 500, ...(cursor ? { cursor } : {}) });
    for (const summary of page.sessions) {
      if (++scanned > MAX_SCANNED) return counts;
      const record = await store.load(summary.sessionId);
      const value = (record?.snapshot as { value?: unknown } | undefined)?.value;
      for (const path of activeStatePaths(value)) counts[path] = (counts[path] ?? 0) + 1;
    }
    cursor = page.nextCursor;
  } while (cursor);
  return counts;
}
