import type { AnyStateMachine } from 'xstate';
import type { FlowSpec } from '@flowing/spec';
import type { AnyMachineDefinition } from '../definition.ts';
import { coverageOf, type Coverage } from './coverage.ts';
import { driveSession } from './drive.ts';
import { observeLog } from './observe.ts';
import { planPaths, type MachinePath, type PlanOptions } from './paths.ts';
import { staticFindings, type Finding } from './static-checks.ts';

/** The outcome of one generated path run headless. */
export interface PathResult {
  name: string;
  ok: boolean;
  /** Why it failed (PATH_DIVERGED, a missing call ...). */
  problem?: string;
  path: MachinePath;
  /** The states the run passed through. */
  states: string[];
  modelCalls: number;
}

/** What `testPaths` found. */
export interface PathsReport {
  machineId: string;
  ok: boolean;
  paths: PathResult[];
  coverage: Coverage;
  /** Static findings (with `spec`) and path warnings (tools without examples). */
  findings: Finding[];
  /** State values and transitions the runs took (to merge with the cases' for a combined coverage). */
  seen: { stateValues: unknown[]; transitions: string[] };
}

export interface TestPathsOptions {
  /** The machine's spec: adds the static findings (unreachable states, dead ends, unused events, constant guards). */
  spec?: FlowSpec;
  maxSnapshots?: number;
  /** The output fields of the machines this one invokes (see PlanOptions): samples for their child sessions' results. */
  machineOutput?: PlanOptions['machineOutput'];
}

/**
 * Generates paths reaching every state and taking every transition the graph can reach, runs each one headless in
 * the runtime (calls answered with the tools' declared examples and sample model answers, nothing called for real),
 * checks each run passes through the states the graph predicted, and reports coverage and findings.
 * @example
 * const report = await testPaths(orderSupport);
 * expect(report.ok).toBe(true);
 * expect(report.coverage.transitions.missed).toEqual([]);
 */
export async function testPaths(machine: AnyMachineDefinition, options: TestPathsOptions = {}): Promise<PathsReport> {
  const plan = planPaths(machine, { maxSnapshots: options.maxSnapshots, machineOutput: options.machineOutput });
  const results: PathResult[] = [];
  const stateValues: unknown[] = [];
  const transitions: string[] = [];
  for (const path of plan.paths) {
    const run = await driveSession(machine, undefined, path.inputs, path.calls, {
      holdTimeouts: true,
      limits: { llmTimeoutMs: 2_147_483_647 },
    });
    const observed = observeLog(run.events, run.status, run.context);
    stateValues.push(...observed.stateValues);
    transitions.push(...observed.transitions);
    const states = observed.steps.flatMap((s) => ('state' in s ? [s.state] : []));
    let problem: string | undefined;
    if (run.missing.length > 0)
      problem = `REPLAY_MISSING_CALL: the run called ${run.missing[0]!.call} '${run.missing[0]!.name}' beyond the path's results`;
    else if (states.join(' > ') !== path.states.join(' > '))
      problem = `PATH_DIVERGED: the graph predicts ${path.states.join(' > ')}; the run went ${states.join(' > ')}`;
    else if (run.unused.length > 0)
      problem = `PATH_DIVERGED: the run never asked for the path's ${run.unused[0]!.call} '${run.unused[0]!.name}' result`;
    results.push({
      name: path.name,
      ok: problem === undefined,
      ...(problem ? { problem } : {}),
      path,
      states,
      modelCalls: observed.modelCalls,
    });
  }
  const findings = [...(options.spec ? staticFindings(options.spec) : []), ...plan.findings];
  return {
    machineId: machine.id,
    ok: results.every((r) => r.ok),
    paths: results,
    coverage: coverageOf(machine.machine as AnyStateMachine, stateValues, transitions),
    findings,
    seen: { stateValues, transitions },
  };
}
