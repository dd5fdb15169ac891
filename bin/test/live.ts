import { FlowingError, type AnyMachineDefinition, type AnyTool } from '@flowing/runtime';
import {
  diffCase,
  driveSession,
  formatCaseDiff,
  observeLog,
  type CaseFile,
  type CaseResult,
  type CaseStep,
} from '@flowing/runtime/testing';
import { chooseProvider } from '../run/provider.ts';

/** What one live run cost. */
export interface LiveFigures {
  modelCalls: number;
  tokens: number;
  /** Summed latency of the model calls. */
  latencyMs: number;
  /** Tools that ran for real (marked safe: idempotent and low risk). */
  realTools: string[];
}

/**
 * `flowing test --live`: the configured OpenAI-compatible model (OPENAI_BASE_URL, OPENAI_API_KEY, FLOWING_MODEL, as
 * `flowing run`) answers the model calls, tools marked safe (idempotent, risk low) run for real, every other tool
 * answers from the recording. A case passes when the state path, the tools called and the final status match the
 * recording (a real model words its replies its own way, so replies, model outputs and context are not compared).
 */
export async function prepareLive() {
  if (!process.env.OPENAI_BASE_URL)
    throw new FlowingError(
      'LIVE_NOT_CONFIGURED',
      '--live runs the cases against a real model: set OPENAI_BASE_URL (and OPENAI_API_KEY, FLOWING_MODEL)',
    );
  const llm = await chooseProvider();
  return {
    async run(machine: AnyMachineDefinition, file: CaseFile): Promise<CaseResult & { live: LiveFigures }> {
      const safe: Record<string, AnyTool> = {};
      for (const [name, tool] of Object.entries(machine.tools)) if (tool.idempotent && tool.risk === 'low') safe[name] = tool;
      const calls = file.calls.filter((call) => call.call === 'tool' && !safe[call.name]);
      const run = await driveSession(machine, file.header.input, file.inputs, calls, { llm, liveTools: safe, realTime: true });
      const observation = observeLog(run.events, run.status, run.context, run.startTransitions);
      const shape = (steps: CaseStep[]) =>
        steps.flatMap((s): CaseStep[] => ('state' in s ? [s] : 'tool' in s ? [{ tool: s.tool, input: null }] : []));
      const diff = diffCase(
        { ...file.expect, steps: shape(file.expect.steps), context: {} },
        { ...observation, steps: shape(observation.steps) },
        run.missing,
        [],
      );
      let latencyMs = 0;
      for (const event of run.events)
        if (event.type === 'llm.completed') latencyMs += Number((event.data as { latencyMs?: number }).latencyMs ?? 0);
      return {
        name: file.header.name,
        ...(file.path ? { path: file.path } : {}),
        ok: diff.ok,
        diff,
        observation,
        elapsedMs: run.elapsedMs,
        report: diff.ok ? [] : formatCaseDiff(file.header.name, diff),
        specChanged: file.header.specHash !== machine.specHash,
        live: { modelCalls: observation.modelCalls, tokens: observation.tokens, latencyMs, realTools: Object.keys(safe) },
      };
    },
  };
}
