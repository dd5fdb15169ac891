import { z } from 'zod';
import { fieldMapToZod, type LlmInvokeSpec } from '@flowing/spec';
import { formatIssues } from '../errors.ts';
import { MAX_LLM_REPAIRS } from '../constants.ts';
import { FlowingError, toFlowError } from '../errors.ts';
import type { AgentToolCaller, LlmCallOptions, LlmRequest, LlmResult, LlmUsage } from '../llm/types.ts';
import type { SessionRun } from '../session/run.ts';
import { requestHash } from '../inspect/request-hash.ts';
import { CallScope, type AttemptSignal } from './signals.ts';
import { callTool, fromFlowError } from './tool-call.ts';
import { truncateForModel } from './truncate.ts';

export interface LlmCallOptionsInternal {
  run: SessionRun;
  key: string;
  request: LlmRequest;
  scope: CallScope;
  invoke?: LlmInvokeSpec;
}

/**
 * One model call with the runtime's guarantees: journal, token budget, per-step model, timeout, output validation with
 * at most two repairs, streamed deltas and `llm.*` events. Resolves with the output the machine's `onDone` sees.
 */
export async function callLlm(options: LlmCallOptionsInternal): Promise<unknown> {
  await null; // leave XState's call stack
  const { run, key } = options;
  const { host } = run;
  const recorded = run.journal.get(key);
  if (recorded?.completed) {
    if (recorded.completed.ok) return recorded.completed.output;
    throw fromFlowError(recorded.completed.error);
  }
  const request = withModel(options.request, host.limits);
  const kind = request.kind;
  const spent = run.usage.promptTokens + run.usage.completionTokens;
  if (spent >= host.limits.tokenBudget) {
    const error = { code: 'BUDGET_EXCEEDED', message: `the session spent ${spent} tokens of its budget of ${host.limits.tokenBudget}` };
    run.append('llm.failed', { callId: key, kind, error });
    await run.flush();
    throw fromFlowError(error);
  }
  const timeoutMs = options.invoke?.timeoutMs ?? host.limits.llmTimeoutMs;
  const callSignal = options.scope.attempt(host.clock, timeoutMs, () => new FlowingError('LLM_TIMEOUT', `the model did not answer within ${timeoutMs} ms`));
  const startedAt = host.clock.now();
  let release: (() => void) | undefined;
  try {
    // A free slot is taken at once; only a wait needs an AbortSignal (made then, like the one the provider may read).
    release = (!callSignal.isAborted && host.calls.tryAcquire()) || await host.calls.acquire(callSignal.signal);
    run.journalWrite({ key, kind: 'llm', name: kind, idempotent: true, startedAt });
    // The request's hash lets a replay match each model call to its recording (createRecordedCalls).
    run.append('llm.started', { callId: key, kind, model: host.llm.modelFor?.(request) ?? request.model ?? null, provider: host.llm.name, isModel: host.llm.isModel, inputHash: requestHash(request) });
    // Model calls have no side effects: a call without a recorded result is simply made again on resume, so its
    // records travel with the next commit instead of costing one of their own.
    run.scheduleCommit();
    const result = await Promise.race([runKind(run, key, request, callSignal, timeoutMs), callSignal.aborted]);
    run.journalWrite({ key, kind: 'llm', name: kind, idempotent: true, startedAt, completed: { at: host.clock.now(), ok: true, output: result.output } });
    run.append('llm.completed', { callId: key, kind, model: result.model, usage: result.usage, latencyMs: host.clock.now() - startedAt, attempts: result.attempts, output: result.output });
    run.scheduleCommit();
    return result.output;
  } catch (thrown) {
    const error = toFlowError(callSignal.isAborted && !(thrown instanceof FlowingError) ? callSignal.signal.reason : thrown, 'LLM_FAILED');
    run.journalWrite({ key, kind: 'llm', name: kind, idempotent: true, startedAt, completed: { at: host.clock.now(), ok: false, error } });
    run.append('llm.failed', { callId: key, kind, error, latencyMs: host.clock.now() - startedAt });
    run.scheduleCommit();
    throw fromFlowError(error);
  } finally {
    release?.();
    callSignal.dispose();
  }
}

function withModel(request: LlmRequest, limits: SessionRun['host']['limits']): LlmRequest {
  const model = request.model ?? limits.models?.[request.kind] ?? limits.models?.default ?? limits.model;
  return model === undefined ? request : { ...request, model };
}

function abortedWith(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * The provider's options for one request. Its AbortSignal is made only when the provider reads it (the scripted
 * and recorded providers answer without looking): an AbortController per model call was a good part of a call's cost.
 */
function callOptions(attempt: AttemptSignal, timeoutMs: number, callId: string): LlmCallOptions {
  return { get signal() { return attempt.signal; }, timeoutMs, callId };
}

async function runKind(run: SessionRun, key: string, request: LlmRequest, attempt: AttemptSignal, timeoutMs: number): Promise<LlmResult<unknown>> {
  const llm = run.host.llm;
  const usage: LlmUsage = { promptTokens: 0, completionTokens: 0 };
  switch (request.kind) {
    case 'classify':
    case 'extract': {
      const check = request.kind === 'classify' ? classifyCheck(request.labels) : extractCheck(request.fields, run.info.invokes.get(key.slice(0, key.indexOf('@'))));
      let attempts = 0;
      let current: LlmRequest = request;
      for (let repair = 0; ; repair++) {
        const result: LlmResult<unknown> = request.kind === 'classify'
          ? await llm.classify(current as typeof request, callOptions(attempt, timeoutMs, key))
          : await llm.extract(current as typeof request, callOptions(attempt, timeoutMs, key));
        count(run, usage, result);
        attempts += result.attempts;
        const verdict = check(result.output);
        if (verdict.ok) return { ...result, output: verdict.output, usage, attempts };
        if (repair >= MAX_LLM_REPAIRS) {
          throw new FlowingError('LLM_BAD_OUTPUT', `the ${request.kind} answer is still invalid after ${MAX_LLM_REPAIRS} repairs: ${verdict.problem}`, { details: { output: result.output } });
        }
        current = { ...request, repair: { previousOutput: result.output, problem: verdict.problem } };
      }
    }
    case 'generate': {
      const options = callOptions(attempt, timeoutMs, key);
      options.onDelta = (text) => { if (!attempt.isAborted) run.append('message.delta', { callId: key, text }); };
      const result = await llm.generate(request, options);
      count(run, usage, result);
      run.append('message.complete', { callId: key, text: result.output.text });
      return { ...result, usage };
    }
    case 'agent': {
      const maxIterations = Math.min(request.maxIterations, run.host.limits.maxAgentIterations);
      const maxToolCalls = maxIterations * 4;
      const info = run.info;
      const signal = attempt.signal;
      const controller = new AbortController();
      signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
      let toolCalls = 0;
      const callToolFromAgent: AgentToolCaller = async (name, args) => {
        // Once the loop is stopped, a provider that keeps calling is left waiting: it can no longer spin or act.
        if (controller.signal.aborted) return new Promise(() => {});
        const n = ++toolCalls;
        if (n > maxToolCalls) {
          controller.abort(new FlowingError('STEP_LIMIT', `the agent made more than ${maxToolCalls} tool calls`));
          return new Promise(() => {});
        }
        const tool = request.tools.includes(name) ? info.definition.tools[name] : undefined;
        if (!tool) return { ok: false, error: { code: 'TOOL_UNKNOWN', message: `there is no tool '${String(name).slice(0, 80)}'; use one of: ${request.tools.join(', ')}` } };
        try {
          const output = await callTool({ run, key: `${key}/${n}`, tool, input: { args }, scope: CallScope.linkedTo(controller.signal), onUnknownOutcome: 'throw' });
          return { ok: true, output: truncateForModel(output, run.host.limits.maxToolResultChars) };
        } catch (error) {
          const flow = toFlowError(error);
          return { ok: false, error: { code: flow.code, message: flow.message } };
        }
      };
      const toolSchemas: NonNullable<LlmCallOptions['toolSchemas']> = {};
      for (const name of request.tools) {
        const tool = info.definition.tools[name];
        if (tool) toolSchemas[name] = { description: tool.description, parameters: z.toJSONSchema(tool.input) as Record<string, unknown> };
      }
      const result = await Promise.race([
        llm.agent({ ...request, maxIterations }, {
          signal: controller.signal, timeoutMs, callId: key, callTool: callToolFromAgent, toolSchemas,
          onStep: (step) => {
            run.append('agent.step', { callId: key, ...step });
            if (step.iteration > maxIterations) controller.abort(new FlowingError('LLM_BAD_OUTPUT', `the agent went past ${maxIterations} iterations`));
          },
        }),
        abortedWith(controller.signal),
      ]);
      count(run, usage, result);
      return { ...result, usage };
    }
  }
}

/** Adds a provider answer's tokens to the call's total and the session's. */
function count(run: SessionRun, usage: LlmUsage, result: LlmResult<unknown>) {
  usage.promptTokens += result.usage.promptTokens;
  usage.completionTokens += result.usage.completionTokens;
  run.addUsage(result.usage);
}

type Verdict = { ok: true; output: unknown } | { ok: false; problem: string };

function classifyCheck(labels: readonly string[]): (output: unknown) => Verdict {
  return (output) => {
    const label = (output as { label?: unknown } | null)?.label;
    return typeof label === 'string' && labels.includes(label)
      ? { ok: true, output: { label } }
      : { ok: false, problem: `label must be one of ${labels.join(', ')}; got ${JSON.stringify(label)?.slice(0, 100)}` };
  };
}

const extractSchemas = new WeakMap<object, ReturnType<typeof fieldMapToZod>>();

function extractCheck(fields: Parameters<typeof fieldMapToZod>[0], invoke: object | undefined): (output: unknown) => Verdict {
  // The spec's fields are the law (generated requests carry a copy of them); building a zod schema is far dearer
  // than using one, so it is built once per spec invoke.
  const specFields = invoke && 'fields' in invoke ? (invoke as { fields?: typeof fields }).fields : undefined;
  let schema = specFields ? extractSchemas.get(specFields) : undefined;
  if (!schema) {
    schema = fieldMapToZod(specFields ?? fields);
    if (specFields) extractSchemas.set(specFields, schema);
  }
  return (output) => {
    const parsed = schema.safeParse(output);
    return parsed.success ? { ok: true, output: parsed.data } : { ok: false, problem: formatIssues(parsed.error.issues) };
  };
}
