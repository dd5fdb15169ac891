import { createRuntime, toFlowError, type MigrationReport, type Runtime, type StaleSession } from '@flowing/runtime';
import { loadServedMachines } from './machines.ts';
import { loadMigrationHooks } from './migrations.ts';
import { openServeStore } from './store.ts';

export interface MigrateCommandOptions {
  store?: string;
  machine?: string;
  dryRun?: boolean;
  json?: boolean;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/**
 * Opens the store with the project's machines and migration hooks, runs `fn` on that runtime, closes the store.
 * `readOnly` opens a SQLite file without taking it over (beside a server that owns it). Exit 2 with the error's code
 * when the store or a hook cannot be loaded.
 */
export async function withVersionedRuntime(
  options: { store?: string; err: (line: string) => void; readOnly?: boolean },
  fn: (runtime: Runtime) => Promise<number>,
): Promise<number> {
  let opened;
  try {
    opened = await openServeStore(options.store, options.err, options.readOnly ? { readOnly: true } : {});
  } catch (error) {
    const flow = toFlowError(error);
    options.err(`error ${flow.code}: ${flow.message}`);
    return 2;
  }
  try {
    const machines = await loadServedMachines();
    const migrations = await loadMigrationHooks(machines.definitions.map((d) => d.id));
    return await fn(createRuntime({ machines: machines.definitions, store: opened.store, migrations, warmSessions: 0 }));
  } catch (error) {
    const flow = toFlowError(error);
    options.err(`error ${flow.code}: ${flow.message}`);
    return 2;
  } finally {
    await opened.close();
  }
}

/** One line for a stale session: id, machine, where it waits, and each reason. */
export function formatStale(s: StaleSession): string {
  const reasons = s.stale.reasons.map((r) => `${r.code}: ${r.message}`).join('; ');
  const hook = s.stale.migratable ? '  (the migration hook carries it over: flowing migrate)' : '';
  return `${s.sessionId}  ${s.machineId}  ${s.status}  in ${s.stale.activeStates.join(', ')}  version ${s.stale.fromVersion.slice(0, 12)} -> ${s.stale.toVersion.slice(0, 12)}  ${reasons}${hook}`;
}

/**
 * `flowing migrate [--dry-run]`: carries every session of an older machine version that fits the served one (as it
 * is, or through the machine's `migrate` hook in its `.impl.ts`) onto it, logging `session.migrated`; lists the
 * others with their reasons. Exit 0 when none is left stale, 1 when some are (or a migration failed), 2 on a usage error.
 */
export async function migrateCommand(options: MigrateCommandOptions = {}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  const readOnly = options.dryRun === true; // a dry run writes nothing: it may run beside the server that owns the file
  return withVersionedRuntime({ ...(options.store ? { store: options.store } : {}), err, readOnly }, async (runtime) => {
    const report = await runtime.migrate({ dryRun: options.dryRun === true, ...(options.machine ? { machineId: options.machine } : {}) });
    if (options.json) out(JSON.stringify(report));
    else printReport(report, out);
    return report.stale.length > 0 || report.failed.length > 0 ? 1 : 0;
  });
}

function printReport(report: MigrationReport, out: (line: string) => void) {
  const verb = report.dryRun ? 'would migrate' : 'migrated';
  for (const m of report.migrated) {
    const renamed = Object.entries(m.renamed).map(([from, to]) => `${from} -> ${to}`);
    out(
      `${verb}  ${m.sessionId}  ${m.machineId}  ${m.fromVersion.slice(0, 12)} -> ${m.toVersion.slice(0, 12)}${m.hook ? '  (hook)' : ''}${renamed.length > 0 ? `  ${renamed.join(', ')}` : ''}`,
    );
  }
  for (const s of report.stale) out(`stale  ${formatStale(s)}`);
  for (const f of report.failed) out(`failed  ${f.sessionId}  ${f.error.code}: ${f.error.message}`);
  out(
    `${report.migrated.length} ${verb}, ${report.stale.length} stale, ${report.failed.length} failed${report.dryRun ? ' (dry run: nothing written)' : ''}`,
  );
}
