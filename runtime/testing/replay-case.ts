import type { AnyMachineDefinition } from '../definition.ts';
import { checkCaseMachine, readCaseFile, type CaseFile } from './case-file.ts';
import { diffCase, type CaseDiff } from './diff.ts';
import { driveSession, type DriveOptions } from './drive.ts';
import { TestingError } from './errors.ts';
import { formatCaseDiff } from './format-diff.ts';
import { observeLog, type Observation } from './observe.ts';

/** The outcome of replaying one case against a machine. */
export interface CaseResult {
  name: string;
  path?: string;
  ok: boolean;
  diff: CaseDiff;
  observation: Observation;
  /** Real time the replay took. */
  elapsedMs: number;
  /** The diff as readable lines (empty when the case passes). */
  report: string[];
  /** True when the case was recorded on a spec hash other than the machine's (informative). */
  specChanged: boolean;
}

/**
 * Replays a recorded case against `machine` — today's generated machine — feeding the recorded tool and model results
 * (a call the recording lacks is refused and reported, never made) and compares what happens with what was recorded.
 * Throws CASE_WRONG_MACHINE / CASE_FORMAT_VERSION / CASE_* for a case that cannot be replayed on this machine.
 * @example
 * const result = await testCase(orderSupport, 'machines/order-support/cases/refund-approved.case.jsonl');
 * expect(result.report).toEqual([]);
 */
export async function testCase(
  machine: AnyMachineDefinition,
  caseFile: string | CaseFile,
  options: DriveOptions = {},
): Promise<CaseResult> {
  const file = typeof caseFile === 'string' ? await readCaseFile(caseFile) : caseFile;
  checkCaseMachine(file, machine.id);
  const run = await driveSession(machine, file.header.input, file.inputs, file.calls, options);
  const observation = observeLog(run.events, run.status, run.context, run.startTransitions);
  const diff = diffCase(file.expect, observation, run.missing, run.unused);
  return {
    name: file.header.name,
    ...(file.path ? { path: file.path } : {}),
    ok: diff.ok,
    diff,
    observation,
    elapsedMs: run.elapsedMs,
    report: diff.ok ? [] : formatCaseDiff(file.header.name, diff),
    specChanged: file.header.specHash !== machine.specHash,
  };
}

/**
 * The case rewritten to expect what the machine does now (for `flowing test --update`): today's spec hash, the
 * recorded results the replay used, and the new timeline, status and final context (the same context keys as before).
 * Refused with CASE_NEEDS_RECORDING when the new machine makes a call the recording has no result for.
 */
export function acceptCase(file: CaseFile, machine: AnyMachineDefinition, result: CaseResult): CaseFile {
  if (result.diff.missing.length > 0) {
    const call = result.diff.missing[0]!;
    throw new TestingError(
      'CASE_NEEDS_RECORDING',
      `case '${file.header.name}' cannot be accepted: the new machine calls ${call.call} '${call.name}', which the recording has no result for; record the case again (flowing run --record, or GET /sessions/:id/case)`,
    );
  }
  const unused = new Set(result.diff.unused);
  const keys = Object.keys(file.expect.context);
  const context = Object.fromEntries(
    keys.filter((key) => key in result.observation.context).map((key) => [key, result.observation.context[key]]),
  );
  return {
    ...file,
    header: { ...file.header, specHash: machine.specHash },
    calls: file.calls.filter((call) => !unused.has(call)),
    expect: { type: 'expect', status: result.observation.status, steps: result.observation.steps, context },
  };
}
