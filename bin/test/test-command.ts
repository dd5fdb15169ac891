import { relative } from 'node:path';
import { toFlowError, type AnyMachineDefinition } from '@flowing/runtime';
import {
  acceptCase,
  coverageOf,
  readCaseFile,
  serializeCase,
  testCase,
  testPaths,
  type CaseFile,
  type CaseResult,
  type Coverage,
  type Finding,
  type PathsReport,
} from '@flowing/runtime/testing';
import type { AnyStateMachine } from 'xstate';
import type { FieldMap } from '@flowing/spec';
import { listMachines, loadMachine } from '../run/load.ts';
import { formatMachineReport } from './format.ts';
import { caseFiles, readSpec, writeFileAtomic } from './machine-files.ts';

export interface TestCommandOptions {
  /** Accept the new behaviour into the diverging case files. */
  update?: boolean;
  json?: boolean;
  /** False: replay cases only. */
  paths?: boolean;
  /** Run the cases' inputs against the configured model and the tools marked safe. */
  live?: boolean;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** One case's outcome as the command reports it. */
export interface CaseOutcome {
  name: string;
  path: string;
  ok: boolean;
  error?: { code: string; message: string };
  result?: CaseResult;
  updated?: boolean;
}

/** One machine's outcome. */
export interface MachineOutcome {
  machineId: string;
  ok: boolean;
  paths?: PathsReport;
  cases: CaseOutcome[];
  coverage: { paths?: Coverage; cases: Coverage; combined: Coverage };
  findings: Finding[];
}

/**
 * `flowing test [machine...]`: for each machine (default: every generated one), path tests generated from the graph
 * and run headless, then every recorded case in `machines/<id>/cases/` replayed against today's machine. Exit status:
 * 0 when every path and case passes, 1 when any diverges or cannot be replayed (a coded error, never a crash), 2 on
 * a usage error (unknown machine).
 */
export async function testCommand(machineIds: string[], options: TestCommandOptions = {}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  const ids = machineIds.length > 0 ? machineIds : [...listMachines().generated].sort();
  if (ids.length === 0) {
    err('error TEST_NO_MACHINES: no generated machine found (machines/<id>/<id>.machine.ts); run `flowing codegen` first');
    return 2;
  }
  const machines: AnyMachineDefinition[] = [];
  try {
    for (const id of ids) machines.push(await loadMachine(id));
  } catch (error) {
    const flow = toFlowError(error, 'UNKNOWN_MACHINE');
    err(`error ${flow.code}: ${flow.message}`);
    return 2;
  }
  let live: Awaited<ReturnType<typeof import('./live.ts').prepareLive>> | undefined;
  if (options.live) {
    try {
      const { prepareLive } = await import('./live.ts');
      live = await prepareLive();
    } catch (error) {
      const flow = toFlowError(error, 'LIVE_NOT_CONFIGURED');
      err(`error ${flow.code}: ${flow.message}`);
      return 2;
    }
  }
  const outcomes: MachineOutcome[] = [];
  for (const machine of machines) {
    const outcome = await testMachine(machine, options, live);
    outcomes.push(outcome);
    if (!options.json) for (const line of formatMachineReport(outcome, { live: live !== undefined })) out(line);
  }
  const ok = outcomes.every((o) => o.ok);
  if (options.json) out(JSON.stringify({ ok, machines: outcomes.map(toJson) }));
  return ok ? 0 : 1;
}

/** The declared output fields of each machine `machine` invokes, read from their specs (path samples of child results). */
async function invokedOutputs(machine: AnyMachineDefinition): Promise<(machineId: string) => FieldMap | undefined> {
  const outputs = new Map<string, FieldMap | undefined>();
  for (const actor of Object.keys((machine.machine as AnyStateMachine).implementations.actors)) {
    if (actor.startsWith('machine.')) outputs.set(actor.slice(8), (await readSpec(actor.slice(8)))?.output);
  }
  return (machineId) => outputs.get(machineId);
}

async function testMachine(
  machine: AnyMachineDefinition,
  options: TestCommandOptions,
  live: Awaited<ReturnType<typeof import('./live.ts').prepareLive>> | undefined,
): Promise<MachineOutcome> {
  const spec = await readSpec(machine.id);
  let paths: PathsReport | undefined;
  const findings: Finding[] = [];
  let pathError: { code: string; message: string } | undefined;
  if (options.paths !== false && !live) {
    try {
      paths = await testPaths(machine, { ...(spec ? { spec } : {}), machineOutput: await invokedOutputs(machine) });
      findings.push(...paths.findings);
    } catch (error) {
      pathError = toFlowError(error, 'PATH_LIMIT');
    }
  }
  const cases: CaseOutcome[] = [];
  const stateValues: unknown[] = [];
  const transitions: string[] = [];
  for (const path of await caseFiles(machine.id)) {
    const shown = relative(process.cwd(), path);
    try {
      const file: CaseFile = await readCaseFile(shown);
      const result = live ? await live.run(machine, file) : await testCase(machine, file);
      stateValues.push(...result.observation.stateValues);
      transitions.push(...result.observation.transitions);
      const outcome: CaseOutcome = { name: file.header.name, path: shown, ok: result.ok, result };
      if (!result.ok && options.update && !live) {
        try {
          await writeFileAtomic(path, serializeCase(acceptCase(file, machine, result)));
          outcome.updated = true;
        } catch (error) {
          outcome.error = toFlowError(error, 'CASE_NEEDS_RECORDING');
        }
      }
      cases.push(outcome);
    } catch (error) {
      cases.push({ name: shown, path: shown, ok: false, error: toFlowError(error, 'CASE_BAD_LINE') });
    }
  }
  const xstate = machine.machine as AnyStateMachine;
  const caseCoverage = coverageOf(xstate, stateValues, transitions);
  const combined = coverageOf(
    xstate,
    [...stateValues, ...(paths?.seen.stateValues ?? [])],
    [...transitions, ...(paths?.seen.transitions ?? [])],
  );
  const pathsOk = pathError === undefined && (paths?.ok ?? true);
  // A case that diverged but was accepted by --update passes from now on; one that could not be accepted does not.
  const casesOk = cases.every((c) => (c.ok || c.updated === true) && c.error === undefined);
  if (pathError) findings.push({ code: 'PATH_LIMIT', where: machine.id, message: pathError.message });
  return {
    machineId: machine.id,
    ok: pathsOk && casesOk,
    ...(paths ? { paths } : {}),
    cases,
    coverage: { ...(paths ? { paths: paths.coverage } : {}), cases: caseCoverage, combined },
    findings,
  };
}

function toJson(outcome: MachineOutcome) {
  return {
    machineId: outcome.machineId,
    ok: outcome.ok,
    paths: outcome.paths && {
      total: outcome.paths.paths.length,
      passed: outcome.paths.paths.filter((p) => p.ok).length,
      failed: outcome.paths.paths.filter((p) => !p.ok).map((p) => ({ name: p.name, problem: p.problem, inputs: p.path.inputs })),
    },
    cases: outcome.cases.map((c) => ({
      name: c.name,
      path: c.path,
      ok: c.ok,
      ...(c.updated ? { updated: true } : {}),
      ...(c.error ? { error: c.error } : {}),
      ...(c.result
        ? {
            modelCalls: c.result.observation.modelCalls,
            tokens: c.result.observation.tokens,
            elapsedMs: Math.round(c.result.elapsedMs * 10) / 10,
          }
        : {}),
      ...(c.result && !c.result.ok
        ? { code: c.result.diff.missing.length > 0 ? 'REPLAY_MISSING_CALL' : 'REPLAY_DIVERGED', diff: c.result.diff }
        : {}),
      ...(c.result && 'live' in c.result ? { live: (c.result as { live: unknown }).live } : {}),
    })),
    coverage: outcome.coverage,
    findings: outcome.findings,
  };
}
