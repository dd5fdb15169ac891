import { AGENT_TOOL_CALLS_PER_ITERATION, DEFAULT_AGENT_ITERATIONS, DEFAULT_TOOL_RETRIES, MAX_LLM_REPAIRS } from '../call-limits.ts';
import { agentToolName, type InvokeSpec, type LlmInvokeSpec, type ToolInvokeSpec } from '../schema.ts';
import type { ToolInfo } from '../validate.ts';
import type { Cost } from './amount.ts';

/** What one invoke may cost at most, and how that was counted. */
export interface CallBound {
  cost: Cost;
  /** How the bound was counted, e.g. `classify: 1 + 2 repairs`. */
  note: string;
  /** The machine a machine invoke starts. */
  machine?: string;
}

/** The id of the machine an invoke starts (`invoke.machine`), read loosely so a spec of any shape is accepted. */
export function invokedMachine(invoke: InvokeSpec | undefined): string | undefined {
  const machine = (invoke as { machine?: unknown } | undefined)?.machine;
  return typeof machine === 'string' ? machine : undefined;
}

/**
 * The bound of a tool or model call. Tool calls count attempts (`1 + retries`): a retry runs the tool again. A tool
 * retries by its invoke's `retries`, else by its definition's (`DEFAULT_TOOL_RETRIES` when the tool is not known),
 * and only when it is idempotent or the invoke passes an `idempotencyKey`.
 */
export function callBound(invoke: InvokeSpec, tools: Record<string, ToolInfo> | undefined): CallBound {
  if ('tool' in invoke) return toolBound(invoke, tools);
  return llmBound(invoke as LlmInvokeSpec, tools);
}

function retriesOf(name: string, tools: Record<string, ToolInfo> | undefined, invoke?: ToolInvokeSpec): { retries: number; why: string } {
  const tool = tools && Object.hasOwn(tools, name) ? tools[name] : undefined;
  if (tool && !tool.idempotent && invoke?.idempotencyKey === undefined) return { retries: 0, why: 'not idempotent' };
  if (invoke?.retries !== undefined) return { retries: invoke.retries, why: 'the invoke' };
  if (tool?.retries !== undefined) return { retries: tool.retries, why: 'its definition' };
  return { retries: DEFAULT_TOOL_RETRIES, why: tool ? 'the default' : 'the default; tool not known' };
}

function toolBound(invoke: ToolInvokeSpec, tools: Record<string, ToolInfo> | undefined): CallBound {
  const { retries, why } = retriesOf(invoke.tool, tools, invoke);
  return {
    cost: { modelCalls: 0, toolCalls: 1 + retries, tokens: 0 },
    note: `tool ${invoke.tool}: 1 + ${retries} retries (${why})`,
  };
}

/**
 * A call with `memory.summarize` may first fold older turns into a summary: one extract (with its repairs) before the
 * call itself, each request within the call's `maxTokens`.
 */
function llmBound(invoke: LlmInvokeSpec, tools: Record<string, ToolInfo> | undefined): CallBound {
  const own = ownLlmBound(invoke, tools);
  if (invoke.memory?.summarize === undefined) return own;
  const requests = 1 + MAX_LLM_REPAIRS;
  const perRequest = invoke.maxTokens ?? Infinity;
  return {
    cost: { ...own.cost, modelCalls: own.cost.modelCalls + requests, tokens: own.cost.tokens + requests * perRequest },
    note: `${own.note}; summary first: 1 + ${MAX_LLM_REPAIRS} repairs`,
  };
}

function ownLlmBound(invoke: LlmInvokeSpec, tools: Record<string, ToolInfo> | undefined): CallBound {
  const perRequest = invoke.maxTokens ?? Infinity;
  const tokensNote = invoke.maxTokens === undefined ? 'no maxTokens' : `${invoke.maxTokens} tokens each`;
  switch (invoke.llm) {
    case 'classify':
    case 'extract': {
      const requests = 1 + MAX_LLM_REPAIRS;
      return {
        cost: { modelCalls: requests, toolCalls: 0, tokens: requests * perRequest },
        note: `${invoke.llm}: 1 + ${MAX_LLM_REPAIRS} repairs, ${tokensNote}`,
      };
    }
    case 'generate':
      return { cost: { modelCalls: 1, toolCalls: 0, tokens: perRequest }, note: `generate: 1 request, ${tokensNote}` };
    case 'agent': {
      const iterations = invoke.maxIterations ?? DEFAULT_AGENT_ITERATIONS;
      // A structured answer that does not match is asked for again without using up an iteration.
      const requests = iterations + (invoke.output === undefined ? 0 : MAX_LLM_REPAIRS);
      // The model may call one tool several times in a turn, so the number of tools bounds nothing: the runtime's
      // cap on the call's tool calls does. Each of them may retry like a tool invoke.
      const agentTools = (invoke.tools ?? []).map(agentToolName);
      const calls = agentTools.length === 0 ? 0 : iterations * AGENT_TOOL_CALLS_PER_ITERATION;
      const attempts = Math.max(1, ...agentTools.map((name) => 1 + retriesOf(name, tools).retries));
      return {
        cost: { modelCalls: requests, toolCalls: calls * attempts, tokens: requests * perRequest },
        note: `agent: ${iterations} iterations${requests > iterations ? ` + ${MAX_LLM_REPAIRS} repairs of its answer` : ''}, ${calls} tool calls x ${attempts} attempts, ${tokensNote}`,
      };
    }
  }
}
