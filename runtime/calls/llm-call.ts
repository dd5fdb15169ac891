import { z } from 'zod';
import { AGENT_TOOL_CALLS_PER_ITERATION, fieldMapToZod, type FieldMap } from '@flowing/spec';
import { MAX_LLM_REPAIRS } from '../constants.ts';
import type { Deadline } from '../deadline.ts';
import { FlowingError, formatIssues, toFlowError } from '../errors.ts';
import { requestHash } from '../inspect/request-hash.ts';
import type { ResolvedLimits } from '../limits.ts';
import { agentResolution, checkedHandoff } from '../llm/handoff.ts';
import type {
  AgentHandoff,
  AgentOutput,
  AgentRequest,
  AgentResume,
  AgentSuspension,
  AgentToolCaller,
  LlmCallOptions,
  LlmRequest,
  LlmResult,
  LlmUsage,
} from '../llm/types.ts';
import { conversationMessages } from './agent-messages.ts';
import { answerProposals, waitKey, type AgentWait } from './agent-proposals.ts';
import type { CallContext } from './context.ts';
import { remember, withSummary, type Remembered } from './llm-memory.ts';
import { callTool, fromFlowError } from './tool-call.ts';
import { truncateForModel } from './truncate.ts';
import { zodSchema } from '../tool.ts';

/**
 * One model call with the runtime's guarantees: journal, token budget, per-step model, timeout, output validation with
 * at most two repairs, streamed deltas and `llm.*` events. Resolves with the output the machine's `onDone` sees.
 */
export async function callLlm(call: CallContext, input: LlmRequest, agent?: string): Promise<unknown> {
  await null; // leave XState's call stack
  const { key, clock, limits } = call;
  const recorded = call.recorded();
  if (recorded?.completed) {
    if (recorded.completed.ok) return recorded.completed.output;
    throw fromFlowError(recorded.completed.error);
  }
  let request = withModel(input, limits);
  const kind = request.kind;
  const usage = call.usage();
  const spent = usage.promptTokens + usage.completionTokens;
  if (spent >= limits.tokenBudget) {
    const error = { code: 'BUDGET_EXCEEDED', message: `the session spent ${spent} tokens of its budget of ${limits.tokenBudget}` };
    call.emit('llm.failed', { callId: key, kind, error });
    await call.commit(true);
    throw fromFlowError(error);
  }
  // Memory (a summary first, then the prompt's share of the conversation) comes before this call takes a slot: the
  // summary is a call of its own and takes one.
  const { memory, history } = request;
  let remembered: Remembered | undefined;
  if (memory && history) {
    try {
      remembered = await remember(call, request, history, memory, callLlm);
      request = remembered.request;
    } catch (thrown) {
      const error = toFlowError(thrown, 'LLM_FAILED');
      call.record({
        key,
        kind: 'llm',
        name: kind,
        idempotent: true,
        startedAt: clock.now(),
        completed: { at: clock.now(), ok: false, error },
      });
      call.emit('llm.failed', { callId: key, kind, error });
      await call.commit(true);
      throw fromFlowError(error);
    }
  }
  const invokeTimeout = call.invoke && 'timeoutMs' in call.invoke ? call.invoke.timeoutMs : undefined;
  const timeoutMs = invokeTimeout ?? limits.llmTimeoutMs;
  // An agent's time limit is per stretch of model work: a wait for a person's approval in between is not timed.
  const deadline = call.deadline.child(kind === 'agent' ? undefined : timeoutMs, () => llmTimeout(timeoutMs));
  const startedAt = clock.now();
  let release: (() => void) | undefined;
  const slot = {
    /** Runs `work` without holding a call slot (the session waits for a person meanwhile). */
    async without<T>(work: () => Promise<T>): Promise<T> {
      release?.();
      release = undefined;
      try {
        return await work();
      } finally {
        release = (!deadline.isAborted && call.slots.tryAcquire()) || (await call.slots.acquire(deadline));
      }
    },
  };
  try {
    // A free slot is taken at once; only a wait needs an AbortSignal (made then, like the one the provider may read).
    release = (!deadline.isAborted && call.slots.tryAcquire()) || (await call.slots.acquire(deadline));
    call.record({ key, kind: 'llm', name: kind, idempotent: true, startedAt });
    // The request's hash lets a replay match each model call to its recording (createRecordedCalls).
    call.emit('llm.started', {
      callId: key,
      kind,
      model: call.llm.modelFor?.(request) ?? request.model ?? null,
      provider: call.llm.name,
      isModel: call.llm.isModel,
      inputHash: requestHash(request),
      ...(request.kind === 'extract' && request.summary ? { purpose: 'summary' } : {}),
      ...(remembered ? { prompt: remembered.prompt } : {}),
    });
    // Model calls have no side effects: a call without a recorded result is simply made again on resume, so its
    // records travel with the next commit instead of costing one of their own.
    void call.commit(false);
    const result = withSummary(await deadline.race(runKind(call, request, deadline, timeoutMs, agent, slot)), remembered?.summary);
    call.record({
      key,
      kind: 'llm',
      name: kind,
      idempotent: true,
      startedAt,
      completed: { at: clock.now(), ok: true, output: result.output },
    });
    call.emit('llm.completed', {
      callId: key,
      kind,
      model: result.model,
      usage: result.usage,
      latencyMs: clock.now() - startedAt,
      attempts: result.attempts,
      ...(result.finishReason ? { finishReason: result.finishReason } : {}),
      ...(result.handoff ? { handoff: result.handoff } : {}),
      output: result.output,
    });
    void call.commit(false);
    return result.output;
  } catch (thrown) {
    // The whole run stopped (parked while waiting, cancelled, taken over): nothing is recorded, a resumed run goes on.
    if (call.runStopped) throw toFlowError(thrown, 'CANCELLED');
    const error = toFlowError(deadline.isAborted && !(thrown instanceof FlowingError) ? deadline.reason : thrown, 'LLM_FAILED');
    // A failed call spent tokens too (a cut stream, answers that failed validation): they count against the budget.
    const spentOnFailure = (error.details as { usage?: LlmUsage } | undefined)?.usage;
    if (spentOnFailure && typeof spentOnFailure.promptTokens === 'number') call.addUsage(spentOnFailure);
    call.record({ key, kind: 'llm', name: kind, idempotent: true, startedAt, completed: { at: clock.now(), ok: false, error } });
    call.emit('llm.failed', { callId: key, kind, error, latencyMs: clock.now() - startedAt });
    void call.commit(false);
    throw fromFlowError(error);
  } finally {
    release?.();
    deadline.dispose();
  }
}

function llmTimeout(timeoutMs: number): FlowingError {
  return new FlowingError('LLM_TIMEOUT', `the model did not answer within ${timeoutMs} ms`);
}

function withModel(request: LlmRequest, limits: ResolvedLimits): LlmRequest {
  const model = request.model ?? limits.models?.[request.kind] ?? limits.models?.default ?? limits.model;
  return model === undefined ? request : { ...request, model };
}

/**
 * The provider's options for one request. Its AbortSignal is made only when the provider reads it (the scripted
 * and recorded providers answer without looking): an AbortController per model call was a good part of a call's cost.
 */
function callOptions(call: CallContext, kind: LlmRequest['kind'], deadline: Deadline, timeoutMs: number): LlmCallOptions {
  return {
    get signal() {
      return deadline.signal;
    },
    timeoutMs,
    callId: call.key,
    clock: call.clock,
    // The request's own kind: a summary made for a generate call is an extract, as its llm.started says.
    onRetry: (retry) => call.emit('llm.retry', { callId: call.key, kind, ...retry }),
  };
}

/**
 * A streamed answer's running token estimate against the session's budget: once the session's spent tokens plus
 * what this answer has written pass the budget, the stream is stopped with BUDGET_EXCEEDED (never after the whole
 * answer was paid for).
 */
function budgetGuard(call: CallContext): (completionTokensSoFar: number) => void {
  const { tokenBudget } = call.limits;
  if (!Number.isFinite(tokenBudget)) return () => {};
  return (soFar) => {
    const session = call.usage();
    const spent = session.promptTokens + session.completionTokens + soFar;
    if (spent > tokenBudget) {
      throw new FlowingError(
        'BUDGET_EXCEEDED',
        `the answer was stopped at about ${soFar} tokens: the session would spend ${spent} tokens of its budget of ${tokenBudget}`,
        { details: { tokenBudget, spent } },
      );
    }
  };
}

/** Deltas of a streamed answer as `message.delta` events, none after the call was stopped. */
function deltas(call: CallContext, deadline: Deadline): (text: string) => void {
  return (text) => {
    if (!deadline.isAborted) call.emit('message.delta', { callId: call.key, text });
  };
}

async function runKind(
  call: CallContext,
  request: LlmRequest,
  deadline: Deadline,
  timeoutMs: number,
  agent: string | undefined,
  slot: { without<T>(work: () => Promise<T>): Promise<T> },
): Promise<LlmResult<unknown> & { handoff?: AgentHandoff }> {
  const { llm, key } = call;
  const usage: LlmUsage = { promptTokens: 0, completionTokens: 0 };
  switch (request.kind) {
    case 'classify':
    case 'extract': {
      const check = request.kind === 'classify' ? classifyCheck(request.labels) : extractCheck(request.fields, call.outputSchema);
      let attempts = 0;
      let current: LlmRequest = request;
      for (let repair = 0; ; repair++) {
        const result: LlmResult<unknown> =
          request.kind === 'classify'
            ? await llm.classify(current as typeof request, callOptions(call, request.kind, deadline, timeoutMs))
            : await llm.extract(current as typeof request, callOptions(call, request.kind, deadline, timeoutMs));
        count(call, usage, result);
        attempts += result.attempts;
        const verdict = check(result.output);
        if (verdict.ok) return { ...result, output: verdict.output, usage, attempts };
        if (repair >= MAX_LLM_REPAIRS) {
          throw new FlowingError(
            'LLM_BAD_OUTPUT',
            `the ${request.kind} answer is still invalid after ${MAX_LLM_REPAIRS} repairs: ${verdict.problem}`,
            { details: { output: result.output } },
          );
        }
        current = { ...request, repair: { previousOutput: result.output, problem: verdict.problem } };
      }
    }
    case 'generate': {
      const options = callOptions(call, request.kind, deadline, timeoutMs);
      options.onDelta = deltas(call, deadline);
      options.onTokens = budgetGuard(call);
      const result = await llm.generate(request, options);
      count(call, usage, result);
      call.emit('message.complete', { callId: key, text: result.output.text });
      return { ...result, usage };
    }
    case 'agent': {
      const maxIterations = Math.min(request.maxIterations, call.limits.maxAgentIterations);
      const maxToolCalls = maxIterations * AGENT_TOOL_CALLS_PER_ITERATION;
      // Where the loop last stopped for proposals a person decides (journaled): it goes on from there.
      const saved = call.nested(waitKey(key), deadline).recorded()?.completed;
      let wait = saved?.ok ? (saved.output as AgentWait) : undefined;
      // Each stretch of model work has its own loop deadline (and time limit); the tool calls it makes hang off it.
      let loop = deadline.child();
      let toolCalls = wait?.toolCalls ?? 0;
      const callToolFromAgent: AgentToolCaller = async (name, args) => {
        // Once the loop is stopped, a provider that keeps calling is left waiting: it can no longer spin or act.
        if (loop.isAborted) return new Promise(() => {});
        const n = ++toolCalls;
        if (n > maxToolCalls) {
          loop.abort(new FlowingError('STEP_LIMIT', `the agent made more than ${maxToolCalls} tool calls`));
          return new Promise(() => {});
        }
        const tool = request.tools.includes(name) ? call.tools[name] : undefined;
        const bound = tool ? request.bound?.[name] : undefined;
        const runArgs = bound ? bindArguments(call, `${key}/${n}`, name, args, bound) : args;
        if (!tool)
          return {
            ok: false,
            error: {
              code: 'TOOL_UNKNOWN',
              message: `there is no tool '${String(name).slice(0, 80)}'; use one of: ${request.tools.join(', ')}`,
            },
          };
        const toolDeadline = loop.child();
        try {
          const output = await callTool(call.nested(`${key}/${n}`, toolDeadline), {
            tool,
            input: { args: runArgs },
            onUnknownOutcome: 'throw',
          });
          return { ok: true, output: truncateForModel(output, call.limits.maxToolResultChars) };
        } catch (error) {
          const flow = toFlowError(error);
          return { ok: false, error: { code: flow.code, message: flow.message } };
        } finally {
          toolDeadline.dispose();
        }
      };
      const toolSchemas: NonNullable<LlmCallOptions['toolSchemas']> = {};
      for (const name of request.tools) {
        const tool = call.tools[name];
        if (tool)
          toolSchemas[name] = {
            description: tool.description,
            parameters: z.toJSONSchema(zodSchema(tool.input)) as Record<string, unknown>,
          };
      }
      const needsApproval = (name: string) => request.tools.includes(name) && call.tools[name]?.risk === 'high';
      const options = callOptions(call, request.kind, deadline, timeoutMs);
      let attempts = 0;
      try {
        let result: LlmResult<AgentOutput>;
        for (;;) {
          // Proposals wait for a person with no call slot held and no time limit running; an approved one runs on the slot.
          const resume = wait && { ...wait, answers: { ...wait.answers, ...(await answerProposals(call, wait, slot.without)) } };
          loop.dispose();
          loop = deadline.child(timeoutMs, () => llmTimeout(timeoutMs));
          result = await loop.race(
            llm.agent(
              { ...request, maxIterations },
              {
                signal: loop.signal,
                timeoutMs,
                callId: key,
                clock: call.clock,
                onRetry: options.onRetry!,
                // A structured answer is JSON for the machine, not text for the user: it is not streamed out.
                ...(request.output ? {} : { onDelta: deltas(call, loop) }),
                onTokens: budgetGuard(call),
                callTool: callToolFromAgent,
                toolSchemas,
                needsApproval,
                ...(resume ? { resume: resumeOf(resume) } : {}),
                onStep: (step) => {
                  call.emit('agent.step', { callId: key, ...step });
                  if (step.iteration > maxIterations)
                    loop.abort(new FlowingError('LLM_BAD_OUTPUT', `the agent went past ${maxIterations} iterations`));
                },
              },
            ),
          );
          count(call, usage, result);
          attempts += result.attempts;
          const suspended = result.output.suspended;
          if (!suspended) break;
          wait = proposalsOf(call, request, suspended, () => ++toolCalls);
          wait.toolCalls = toolCalls;
          if (toolCalls > maxToolCalls) throw new FlowingError('STEP_LIMIT', `the agent made more than ${maxToolCalls} tool calls`);
          const at = call.clock.now();
          call.record({
            key: waitKey(key),
            kind: 'llm',
            name: 'agent',
            idempotent: true,
            startedAt: at,
            completed: { at, ok: true, output: wait },
          });
          await call.commit(true);
        }
        result = { ...result, attempts };
        // A replayed call answers with what the call resolved with the first time: the object itself, with its messages.
        const replayed = request.output && !('output' in result.output) ? (result.output as unknown as Record<string, unknown>) : undefined;
        const { messages: replayedMessages, ...replayedAnswer } = replayed ?? {};
        const given = result.output.messages ?? (replayedMessages as AgentOutput['messages']);
        const messages = request.history ? { messages: conversationMessages(given ?? [], agent, request.bound) } : {};
        // A handoff ends the call: routed by the machine's onDone branches, never shown as an answer. The
        // conversation goes along in its messages.
        const handoff = checkedHandoff(request, result.output);
        if (handoff) {
          const resolution = agentResolution(request, result.output) as Record<string, unknown>;
          return { ...result, output: { ...resolution, ...messages }, usage, handoff };
        }
        if (!request.output) {
          call.emit('message.complete', { callId: key, text: result.output.text });
          return { ...result, output: { text: result.output.text, steps: result.output.steps, ...messages }, usage };
        }
        const answer = replayed ? replayedAnswer : result.output.output;
        const verdict = extractCheck(request.output, call.outputSchema)(answer);
        if (!verdict.ok) {
          throw new FlowingError('LLM_BAD_OUTPUT', `the agent's structured answer does not match its output fields: ${verdict.problem}`, {
            details: { output: answer ?? null },
          });
        }
        return { ...result, output: { ...(verdict.output as Record<string, unknown>), ...messages }, usage };
      } finally {
        loop.dispose();
      }
    }
  }
}

/** What a stopped loop goes on with: where it stopped, and every answer of its last turn. */
function resumeOf(wait: AgentWait): AgentResume {
  const { iteration, messages, answers, conversation } = wait;
  return { iteration, messages, answers, ...(conversation ? { conversation } : {}) };
}

/**
 * The proposals of a stopped agent loop, numbered as its tool calls and with the bound arguments set (a model that
 * sent another value for one is overruled and logged): what a person approves is exactly what will run.
 */
function proposalsOf(call: CallContext, request: AgentRequest, suspended: AgentSuspension, next: () => number): AgentWait {
  const pending = suspended.pending.map((proposal) => {
    const n = next();
    const bound = request.bound?.[proposal.name];
    const args = bound ? bindArguments(call, `${call.key}/${n}`, proposal.name, proposal.args, bound) : proposal.args;
    return { ...proposal, n, args };
  });
  return { ...suspended, pending, toolCalls: 0 };
}

/**
 * The arguments a bound tool runs with: the model's, with every bound field set to its value from context. A model
 * that sent a bound field anyway does not get its way; the attempt is logged (`tool.bind_overridden`).
 */
function bindArguments(call: CallContext, callId: string, tool: string, args: unknown, bound: Readonly<Record<string, unknown>>): unknown {
  const given = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const overridden = Object.keys(bound).filter((field) => Object.hasOwn(given, field) && !sameValue(given[field], bound[field]));
  if (overridden.length > 0) {
    call.emit('tool.bind_overridden', {
      callId,
      tool,
      fields: overridden,
      sent: Object.fromEntries(overridden.map((f) => [f, given[f]])),
    });
  }
  return { ...given, ...bound };
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** Adds a provider answer's tokens to the call's total and the session's. */
function count(call: CallContext, usage: LlmUsage, result: LlmResult<unknown>) {
  usage.promptTokens += result.usage.promptTokens;
  usage.completionTokens += result.usage.completionTokens;
  call.addUsage(result.usage);
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

function extractCheck(fields: FieldMap, schema: z.ZodType | undefined): (output: unknown) => Verdict {
  // The spec's fields are the law (generated requests carry a copy of them); the machine's schema is built once.
  const check = schema ?? fieldMapToZod(fields);
  return (output) => {
    const parsed = check.safeParse(output);
    return parsed.success ? { ok: true, output: parsed.data } : { ok: false, problem: formatIssues(parsed.error.issues) };
  };
}
