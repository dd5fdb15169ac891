import { toFlowError, type FlowError } from '../errors.ts';
import { planFor } from './carry.ts';
import { olderVersions, type StaleSession, type VersionScope } from './list.ts';

/** What `runtime.migrate()` did (or, dry, would do). */
export interface MigrationReport {
  dryRun: boolean;
  /** Sessions carried onto the served version (or that would be). */
  migrated: Array<{
    sessionId: string;
    machineId: string;
    fromVersion: string;
    toVersion: string;
    hook: boolean;
    renamed: Record<string, string>;
  }>;
  /** Sessions that stay under their version, with the reasons. */
  stale: StaleSession[];
  /** Sessions whose migration failed when written (another writer moved them on, the store refused). */
  failed: Array<{ sessionId: string; error: FlowError }>;
}

/**
 * Plans every session of an older version with its machine's hook; `open` carries one over (under the session's
 * turn and lease, the way any event would). Dry, nothing is opened or written.
 */
export async function runMigrations(
  scope: VersionScope,
  open: (sessionId: string) => Promise<void>,
  options: { dryRun?: boolean; machineId?: string } = {},
): Promise<MigrationReport> {
  const report: MigrationReport = { dryRun: options.dryRun === true, migrated: [], stale: [], failed: [] };
  for await (const { summary, record, info } of olderVersions(scope, options.machineId)) {
    const hook = scope.hook(record.machineId);
    const plan = await planFor(scope.store, record, info, hook);
    if (!plan.ok) {
      report.stale.push({
        ...summary,
        stale: {
          fromVersion: plan.fromVersion,
          toVersion: plan.toVersion,
          activeStates: plan.activeStates,
          reasons: plan.reasons,
          migratable: false,
        },
      });
      continue;
    }
    if (!report.dryRun) {
      try {
        await open(record.sessionId);
      } catch (error) {
        report.failed.push({ sessionId: record.sessionId, error: toFlowError(error) });
        continue;
      }
    }
    report.migrated.push({
      sessionId: record.sessionId,
      machineId: record.machineId,
      fromVersion: plan.fromVersion,
      toVersion: plan.toVersion,
      hook: plan.hook,
      renamed: plan.renamed,
    });
  }
  return report;
}
