import { fromPromise } from 'xstate';
import { attemptTool, parseToolInput } from './calls/tool-attempt.ts';
import { systemClock } from './clock.ts';
import { FlowingError } from './errors.ts';
import { createScriptedProvider } from './llm/scripted.ts';
import type {
  AgentOutput,
  AgentRequest,
  ClassifyOutput,
  ClassifyRequest,
  ExtractRequest,
  GenerateOutput,
  GenerateRequest,
  LlmProvider,
  LlmRequest,
  StructuredAgentOutput,
} from './llm/types.ts';
import { agentResolution } from './llm/handoff.ts';
import type { AnyTool, ToolInput, ToolOutput } from './tool.ts';
import type { ToolCallInput } from './calls/context.ts';

/**
 * The plain adapter that lets a generated machine call a tool under bare XState `createActor`: it validates
 * input and output with the tool's zod contract, enforces the timeout through the AbortSignal and turns every
 * failure into a `{ code, message }` error. Retries, journaling and approvals are added by the Flowing runtime,
 * which replaces these actors through `machine.provide`.
 */
export function fromTool<TTool extends AnyTool>(tool: TTool) {
  return fromPromise<ToolOutput<TTool>, ToolCallInput<ToolInput<TTool>>>(async ({ input, signal, self }) => {
    const parsed = parseToolInput(tool, input.args);
    if (!parsed.ok) throw new FlowingError(parsed.error.code, parsed.error.message, { details: parsed.error.details });
    const idempotencyKey = input.idempotencyKey ?? self.id;
    return (await attemptTool(tool, parsed.args, {
      idempotencyKey,
      deadline: signal,
      timeoutMs: tool.timeoutMs,
      clock: systemClock,
    })) as ToolOutput<TTool>;
  });
}

/** Renders a value for a prompt or a model input: undefined and null as an empty string. Used by generated code. */
export function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * A model call actor for bare XState use. It answers with the scripted (offline, deterministic) provider unless a
 * provider is given; the Flowing runtime replaces it with its journaled, budgeted, logged version.
 */
export function fromLlm<TLabel extends string = string>(
  kind: 'classify',
  provider?: LlmProvider,
): ReturnType<typeof fromPromise<ClassifyOutput<TLabel>, ClassifyRequest>>;
export function fromLlm<TOutput extends Record<string, unknown>>(
  kind: 'extract',
  provider?: LlmProvider,
): ReturnType<typeof fromPromise<TOutput, ExtractRequest>>;
export function fromLlm(kind: 'generate', provider?: LlmProvider): ReturnType<typeof fromPromise<GenerateOutput, GenerateRequest>>;
export function fromLlm(kind: 'agent', provider?: LlmProvider): ReturnType<typeof fromPromise<AgentOutput, AgentRequest>>;
/** An agent with handoffs: `output.handoff.to` is one of its targets. */
export function fromLlm<TTo extends string>(
  kind: 'agent',
  provider?: LlmProvider,
): ReturnType<typeof fromPromise<AgentOutput<TTo>, AgentRequest>>;
/** An agent with structured output (`output` fields in the spec): its answer is the typed object. */
export function fromLlm<TOutput extends Record<string, unknown>>(
  kind: 'agent',
  provider?: LlmProvider,
): ReturnType<typeof fromPromise<TOutput, AgentRequest>>;
/** An agent with structured output and handoffs: its typed answer, or the handoff. */
export function fromLlm<TOutput extends Record<string, unknown>, TTo extends string>(
  kind: 'agent',
  provider?: LlmProvider,
): ReturnType<typeof fromPromise<StructuredAgentOutput<TOutput, TTo>, AgentRequest>>;
export function fromLlm(
  kind: 'classify' | 'extract' | 'generate' | 'agent',
  provider?: LlmProvider,
  // biome-ignore lint/suspicious/noExplicitAny: the overloads above carry the precise types
): ReturnType<typeof fromPromise<any, any>> {
  let llm: LlmProvider | undefined = provider;
  return fromPromise<unknown, LlmRequest>(async ({ input, signal }) => {
    llm ??= createScriptedProvider();
    const call = llm[kind] as (request: LlmRequest, options: { signal: AbortSignal }) => Promise<{ output: unknown }>;
    const output = (await call.call(llm, input, { signal })).output;
    return kind === 'agent' ? agentResolution(input as AgentRequest, output as AgentOutput) : output;
  });
}

/**
 * The actor of a machine invoke, for generated code: typed by the child's input and output. Only the Flowing runtime
 * runs a child session (it replaces this actor through `machine.provide`); under bare XState it fails with
 * MACHINE_CALL_OUTSIDE_RUNTIME.
 */
export function fromMachine<TInput, TOutput>(machineId: string) {
  return fromPromise<TOutput, TInput>(async () => {
    throw new FlowingError(
      'MACHINE_CALL_OUTSIDE_RUNTIME',
      `invoking machine '${machineId}' starts a child session, which only a Flowing runtime (createRuntime) can do`,
    );
  });
}
