import { join, relative } from 'node:path';
import { FlowingError, type RuntimeEvent } from '@flowing/runtime';
import { caseFromLog, serializeCase } from '@flowing/runtime/testing';
import { machineDir, writeFileAtomic } from './machine-files.ts';

const CASE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Refuses a case name that is not a plain file name (RUN_BAD_CASE_NAME), before the session runs. */
export function checkCaseName(name: string): void {
  if (!CASE_NAME.test(name)) {
    throw new FlowingError(
      'RUN_BAD_CASE_NAME',
      `--record takes a case name of 1-64 characters a-z 0-9 _ - (starting with a letter or digit), not ${JSON.stringify(name.slice(0, 80))}`,
    );
  }
}

/** Saves a finished session as `machines/<id>/cases/<name>.case.jsonl` (`flowing run --record NAME`); returns its path (relative to the working directory). */
export async function recordCase(
  machineId: string,
  name: string,
  events: readonly RuntimeEvent[],
  final: { status: string; context: unknown },
): Promise<string> {
  const file = caseFromLog(events, final, { name, source: 'run' });
  const path = join(machineDir(machineId), 'cases', `${name}.case.jsonl`);
  await writeFileAtomic(path, serializeCase(file));
  return relative(process.cwd(), path);
}
