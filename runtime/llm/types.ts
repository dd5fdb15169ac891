import type { Clock } from '../clock.ts';
import type { ConversationMessage, FieldMap, MemorySpec } from '@flowing/spec';

/** Request shapes handed to model calls; generated machines build them from the spec. */
export interface LlmRequestBase {
  /** Model name from the spec; the provider's default when absent. */
  model?: string;
  system?: string;
  /** Offline rules for the scripted provider (ignored by real models). */
  scripted?: {
    keywords?: Record<string, readonly string[]>;
    patterns?: Record<string, string>;
    reply?: string;
    /** agent: handoff target -> keywords in the prompt that choose it. */
    handoffs?: Record<string, readonly string[]>;
  };
  /**
   * Set by the runtime when it asks again because the previous answer failed validation (classify/extract): the
   * provider should show the model its previous output and the problem. At most two repairs follow a first attempt.
   */
  repair?: { previousOutput: unknown; problem: string };
  /** Sampling settings from the spec, sent to real models as they are. */
  temperature?: number;
  topP?: number;
  /** The most tokens one answer of this call may have (sent as `max_completion_tokens`); the cost bound counts it. */
  maxTokens?: number;
  /**
   * The conversation so far (the spec's `history`), sent before the call's own text or prompt. With a history, an
   * empty `text` or `prompt` means the call has none of its own: the conversation's last user message is what it reads.
   */
  history?: readonly ConversationMessage[];
  /** The spec's `memory`: how the runtime trims and summarises the call's conversation before sending it. */
  memory?: MemorySpec;
}
export interface ClassifyRequest extends LlmRequestBase {
  kind: 'classify';
  text: string;
  labels: readonly string[];
  prompt?: string;
}
export interface ExtractRequest extends LlmRequestBase {
  kind: 'extract';
  text: string;
  fields: FieldMap;
  prompt?: string;
  /**
   * Set when the runtime asks for a summary of older conversation turns (the fields are the kept facts and
   * `content`): the facts of the summary it rolls on from, and how many messages the new one covers.
   */
  summary?: { previousFacts: Record<string, unknown>; covers: number };
}
export interface GenerateRequest extends LlmRequestBase {
  kind: 'generate';
  prompt: string;
}
export interface AgentRequest extends LlmRequestBase {
  kind: 'agent';
  prompt: string;
  tools: readonly string[];
  maxIterations: number;
  /** Tool arguments fixed from context, per tool: hidden from the model's schema, and they win over what it sends. */
  bound?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Structured output: the final answer is a JSON object with these fields (`AgentOutput.output`). */
  output?: FieldMap;
  /** Targets the model may hand off to, each offered as tool `transfer_to_<name>`; choosing one ends the call. */
  handoffs?: readonly string[];
}
export type LlmRequest = ClassifyRequest | ExtractRequest | GenerateRequest | AgentRequest;

export interface ClassifyOutput<TLabel extends string = string> {
  label: TLabel;
  /** With a `history` and a memory that summarises: the summary made before this call, to append to the conversation. */
  messages?: ConversationMessage[];
}
export type ExtractOutput = Record<string, unknown>;
export interface GenerateOutput {
  text: string;
  /** With a `history` and a memory that summarises: the summary made before this call, to append to the conversation. */
  messages?: ConversationMessage[];
}
/** How an agent call ended when the model handed off: the `onDone` branches route on `to`. */
export interface AgentHandoff<TTo extends string = string> {
  to: TTo;
  /** Why, in the model's words, when it gave one. */
  reason?: string;
  /** The last user message the agent read (its prompt), for the target to pick up. */
  message: string;
}

export interface AgentOutput<TTo extends string = string> {
  text: string;
  steps: number;
  /** The final answer read as JSON, when the request asked for structured output (checked by the runtime). */
  output?: Record<string, unknown>;
  /** Set when the model handed off instead of answering (then `text` is empty and `output` absent). */
  handoff?: AgentHandoff<TTo>;
  /**
   * With a `history`: this call's new messages, to append to it: the prompt as a user message (when the call has
   * one), each assistant turn with its tool calls, each tool result right after its turn (in the model's order), and
   * the final answer.
   */
  messages?: ConversationMessage[];
  /**
   * Set when the model proposed calls of tools that need a person's approval (`needsApproval`): the loop stopped
   * after its turn, and continues from here with `LlmCallOptions.resume` once every proposal has an answer.
   */
  suspended?: AgentSuspension;
}

/** A tool call the model proposed and the loop did not run: it waits for a person's decision. */
export interface AgentProposal {
  /** The model's tool call id. */
  id: string;
  name: string;
  args: unknown;
}

/**
 * Where an agent loop stopped for proposals: its transcript up to the model's turn with the proposals (JSON, in the
 * provider's own message format), the answers of that turn's calls that ran, and the proposals.
 */
export interface AgentSuspension {
  iteration: number;
  messages: unknown[];
  /** Tool call id -> the text the model gets as that call's result. */
  answers: Record<string, string>;
  pending: AgentProposal[];
  /** With a history: the call's new conversation messages so far (its last turn's results not yet in). */
  conversation?: ConversationMessage[];
}

/** Continues a suspended loop: every call of its last turn now has an answer (the proposals' included). */
export interface AgentResume {
  iteration: number;
  messages: unknown[];
  answers: Record<string, string>;
  conversation?: ConversationMessage[];
}

/**
 * What an agent with structured output resolves with: its typed answer, or, when it handed off, the handoff (the
 * answer's fields then absent).
 */
export type StructuredAgentOutput<TOutput extends Record<string, unknown>, TTo extends string = never> =
  | (TOutput & { handoff?: undefined })
  | (Partial<TOutput> & { handoff: AgentHandoff<TTo> });

export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface LlmResult<TOutput> {
  output: TOutput;
  model: string;
  usage: LlmUsage;
  /** Model requests made, repairs included. */
  attempts: number;
  /** Why the model stopped its (last) answer, when the provider says: `stop`, `length`, `tool_calls` ... */
  finishReason?: string;
}

/** One tool call made by an agent loop; the runtime runs it through the tool wrapper. */
export type AgentToolCaller = (
  name: string,
  args: unknown,
) => Promise<{ ok: true; output: unknown } | { ok: false; error: { code: string; message: string } }>;

export interface LlmCallOptions {
  signal: AbortSignal;
  timeoutMs?: number;
  /** The runtime's clock, for the provider's own timeouts (the real clock when absent). */
  clock?: Clock;
  /** The runtime's key of this call (`<invoke>@<step>`), for providers that log or answer by call. */
  callId?: string;
  /** generate and agent: each streamed piece of the answer's text. */
  onDelta?: (text: string) => void;
  /** agent: runs a tool the model asked for. */
  callTool?: AgentToolCaller;
  /** agent: tool contracts offered to the model (JSON Schema of the input). */
  toolSchemas?: Record<string, { description: string; parameters: Record<string, unknown> }>;
  /** A model request is tried again after a rate limit, a server error or a timeout (for the event log). */
  onRetry?: (retry: { attempt: number; delayMs: number; error: { code: string; message: string } }) => void;
  /** Called with the tokens a streaming answer has used so far; a throw stops the stream (the token budget). */
  onTokens?: (completionTokensSoFar: number) => void;
  /** agent: each step, for the event log. */
  onStep?: (step: AgentStep) => void;
  /** agent: true for a tool whose calls the model may only propose (a person decides); the loop stops to ask. */
  needsApproval?: (tool: string) => boolean;
  /** agent: continue a loop that stopped for proposals, without asking the model again for the turns it made. */
  resume?: AgentResume;
}

/** One model turn of an agent loop, as logged (`agent.step`). */
export interface AgentStep {
  iteration: number;
  /** The calls the model asked for; `refused` when one was answered with an error instead of running (e.g. HANDOFF_UNKNOWN). */
  toolCalls: Array<{ id: string; name: string; args: unknown; refused?: { code: string; message: string } }>;
  text?: string;
}

/** The one interface every model provider implements. */
export interface LlmProvider {
  readonly name: string;
  /** True for real models; false for deterministic stand-ins (the scripted provider). */
  readonly isModel: boolean;
  /** The model this provider will use for the request (for the `llm.started` log), when it decides itself. */
  modelFor?(request: LlmRequest): string | undefined;
  classify(request: ClassifyRequest, options: LlmCallOptions): Promise<LlmResult<ClassifyOutput>>;
  extract(request: ExtractRequest, options: LlmCallOptions): Promise<LlmResult<ExtractOutput>>;
  generate(request: GenerateRequest, options: LlmCallOptions): Promise<LlmResult<GenerateOutput>>;
  agent(request: AgentRequest, options: LlmCallOptions): Promise<LlmResult<AgentOutput>>;
}
