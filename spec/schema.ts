import { z } from 'zod';

/** The spec format version this package reads and writes. */
export const SPEC_VERSION = 1;

/** A field type used for context fields, event payloads and extracted fields. */
export interface FieldType {
  /** `conversation`: a message list (see spec/conversation.ts) that model calls read as `history`; it starts as `[]`. */
  type: 'string' | 'number' | 'boolean' | 'enum' | 'array' | 'object' | 'unknown' | 'conversation';
  optional?: boolean;
  description?: string;
  /** Allowed values of an `enum` field. */
  values?: string[];
  /** Element type of an `array` field. */
  items?: FieldType;
  /** Fields of an `object` field. */
  fields?: Record<string, FieldType>;
  /** Initial value (context fields only). */
  default?: unknown;
}

export const FieldTypeSchema: z.ZodType<FieldType> = z.lazy(() =>
  z.strictObject({
    type: z.enum(['string', 'number', 'boolean', 'enum', 'array', 'object', 'unknown', 'conversation']),
    optional: z.boolean().optional(),
    description: z.string().optional(),
    values: z.array(z.string()).optional(),
    items: FieldTypeSchema.optional(),
    fields: z.record(z.string(), FieldTypeSchema).optional(),
    default: z.unknown().optional(),
  }),
);

export const FieldMapSchema = z.record(z.string(), FieldTypeSchema);
export type FieldMap = z.infer<typeof FieldMapSchema>;

/** An expression in the Flowing expression language (see spec/expression). */
export const ExpressionSchema = z.string();

/** A guard: an expression, or a reference to a named guard implemented in `<id>.impl.ts`. */
export const GuardSchema = z.union([ExpressionSchema, z.strictObject({ ref: z.string() })]);
export type GuardSpec = z.infer<typeof GuardSchema>;

/** Context updates: context field -> expression. */
export const AssignSchema = z.record(z.string(), ExpressionSchema);

/**
 * A message published on a channel: `channel` routes it (by the prefixes machines listen to), `key` picks the
 * receiving session (its correlation key), `data` is the payload, field -> expression.
 */
export const EmitSchema = z.strictObject({
  channel: z.string(),
  key: ExpressionSchema,
  data: AssignSchema.optional(),
});
export type EmitSpec = z.infer<typeof EmitSchema>;

export const TransitionObjectSchema = z.strictObject({
  target: z.string().optional(),
  guard: GuardSchema.optional(),
  assign: AssignSchema.optional(),
  /** Named actions implemented in `<id>.impl.ts`, run in order after `assign`. */
  actions: z.array(z.string()).optional(),
  /** Messages published after `assign` and `actions` (see EmitSchema). */
  emit: z.array(EmitSchema).optional(),
  description: z.string().optional(),
});
export type TransitionObject = z.infer<typeof TransitionObjectSchema>;

/** A transition: a target state name, one transition object, or a guarded list (first match wins). */
export const TransitionSchema = z.union([z.string(), TransitionObjectSchema, z.array(TransitionObjectSchema)]);
export type TransitionSpec = z.infer<typeof TransitionSchema>;

export const ActionBlockSchema = z.strictObject({
  assign: AssignSchema.optional(),
  actions: z.array(z.string()).optional(),
  emit: z.array(EmitSchema).optional(),
});
export type ActionBlock = z.infer<typeof ActionBlockSchema>;

const invokeCommon = {
  description: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  onDone: TransitionSchema.optional(),
  onError: TransitionSchema.optional(),
};

export const ToolInvokeSchema = z.strictObject({
  tool: z.string(),
  /** Tool input field -> expression over `context` and `event`. */
  input: z.record(z.string(), ExpressionSchema).optional(),
  /** Extra attempts after the first failure; only allowed for idempotent tools or with an idempotency key. */
  retries: z.number().int().min(0).max(10).optional(),
  /** Expression giving a key that makes repeated calls safe to retry (the tool dedups on it). */
  idempotencyKey: ExpressionSchema.optional(),
  ...invokeCommon,
});
export type ToolInvokeSpec = z.infer<typeof ToolInvokeSchema>;

export const LLM_KINDS = ['classify', 'extract', 'generate', 'agent'] as const;
export type LlmKind = (typeof LLM_KINDS)[number];

/** Offline rules for the scripted provider: not a model, deterministic fixtures. */
export const ScriptedRulesSchema = z.strictObject({
  /**
   * classify: label -> keywords (case-insensitive); the first label with a hit wins, else the last label. extract and
   * agent output: enum value -> keywords, the same way for each enum field (default keyword: the value itself).
   */
  keywords: z.record(z.string(), z.array(z.string())).optional(),
  /**
   * extract and agent output: field (a dotted path inside object fields) -> regular expression; the first capture group
   * (or whole match) fills the field, an array field takes every match. Required fields nothing fills get '' / 0 /
   * false / the last enum value / [].
   */
  patterns: z.record(z.string(), z.string()).optional(),
  /** generate/agent: reply template with {{ expression }} holes; defaults to the prompt. */
  reply: z.string().optional(),
  /**
   * agent: handoff target -> keywords (case-insensitive) in the prompt; the first target, in the order of `handoffs`,
   * with a hit is chosen and the call ends with `output.handoff`.
   */
  handoffs: z.record(z.string(), z.array(z.string())).optional(),
});
export type ScriptedRules = z.infer<typeof ScriptedRulesSchema>;

/**
 * A tool handed to an agent with some of its arguments fixed from context: the model never sees those arguments in the
 * tool's schema, and a value it sends for one anyway is replaced by the bound value (and logged).
 */
export const BoundToolSchema = z.strictObject({
  tool: z.string(),
  /** Tool input field -> expression over `context`. */
  bind: z.record(z.string(), ExpressionSchema),
});
export type BoundToolSpec = z.infer<typeof BoundToolSchema>;
export const AgentToolSchema = z.union([z.string(), BoundToolSchema]);
export type AgentToolSpec = z.infer<typeof AgentToolSchema>;

/** The tool name of an agent's tool entry. */
export function agentToolName(entry: AgentToolSpec): string {
  return typeof entry === 'string' ? entry : entry.tool;
}

/**
 * What a model call sends of its conversation (`history`): the last `window` turns verbatim (a turn starts at a user
 * message). With `summarize`, once more than `after` turns are not yet summarised, a model call folds all but the
 * last `window` turns into a summary (its kept facts and a text), and the prompt is the latest summary and every turn
 * after it. The prompt is kept within `maxPromptTokens` (else the call's `maxTokens`) by dropping the oldest turns.
 */
export const MemorySchema = z.strictObject({
  window: z.number().int(),
  summarize: z
    .strictObject({
      after: z.number().int(),
      /** The facts a summary keeps: names (text facts) or typed fields; a summary also has a `content` text. */
      keep: z.union([z.array(z.string()), FieldMapSchema]).optional(),
      /** Offline rules for the scripted provider's summaries (patterns per kept fact; the last match wins). */
      scripted: ScriptedRulesSchema.optional(),
    })
    .optional(),
  maxPromptTokens: z.number().int().positive().optional(),
});
export type MemorySpec = z.infer<typeof MemorySchema>;

/** The prefix of the tool an agent's model calls to hand off (`transfer_to_billing`). */
export const HANDOFF_TOOL_PREFIX = 'transfer_to_';

/** The tool name the model sees for a handoff target. */
export function handoffToolName(target: string): string {
  return `${HANDOFF_TOOL_PREFIX}${target}`;
}

export const LlmInvokeSchema = z.strictObject({
  llm: z.enum(LLM_KINDS),
  /** Model name; falls back to the machine's `models` table, then the provider default. */
  model: z.string().optional(),
  /** classify/extract: the text to read, an expression. */
  input: ExpressionSchema.optional(),
  /** classify: the labels to choose from. */
  labels: z.array(z.string()).optional(),
  /** extract: the fields to fill. */
  fields: FieldMapSchema.optional(),
  /** generate/agent: user prompt template with {{ expression }} holes. */
  prompt: z.string().optional(),
  /** System prompt template with {{ expression }} holes. */
  system: z.string().optional(),
  /**
   * The conversation the model reads before this call's own prompt: `context.<field>` naming a conversation field. An
   * agent call with a history appends its new messages (its prompt, its turns, each tool result) to that field.
   */
  history: ExpressionSchema.optional(),
  /** agent: tools the model may call, by name, or with arguments bound to expressions over `context`. */
  tools: z.array(AgentToolSchema).optional(),
  /** agent: the final answer as a typed object with these fields (structured output) instead of text. */
  output: FieldMapSchema.optional(),
  /**
   * agent: targets the model may hand the conversation to. Each is offered as a tool `transfer_to_<name>`; choosing
   * one ends the call with `output.handoff` (`{ to, reason?, message }`), which `onDone` branches route.
   */
  handoffs: z.array(z.string()).optional(),
  /** Sampling temperature sent to the model (0 to 2). */
  temperature: z.number().min(0).max(2).optional(),
  /** Nucleus sampling sent to the model (0 to 1). */
  topP: z.number().min(0).max(1).optional(),
  /** agent: upper bound on model turns. */
  maxIterations: z.number().int().positive().max(50).optional(),
  /** Tokens one model request of this call may use; the cost bound counts it (without it, a path's tokens are unbounded). */
  maxTokens: z.number().int().positive().optional(),
  scripted: ScriptedRulesSchema.optional(),
  /** Trimming and summaries of the conversation the call reads (`history`). */
  memory: MemorySchema.optional(),
  ...invokeCommon,
});
export type LlmInvokeSpec = z.infer<typeof LlmInvokeSchema>;

/**
 * Starts a child session of another machine of the project; the state waits for it. `onDone` gets the child's
 * output (what its final state returns), `onError` its failure.
 */
export const MachineInvokeSchema = z.strictObject({
  /** The id of the machine to run as a child session. */
  machine: z.string(),
  /** Child context field -> expression over the parent's `context`: the child session's input. */
  input: z.record(z.string(), ExpressionSchema).optional(),
  ...invokeCommon,
});
export type MachineInvokeSpec = z.infer<typeof MachineInvokeSchema>;

export const InvokeSchema = z.union([ToolInvokeSchema, LlmInvokeSchema, MachineInvokeSchema]);
export type InvokeSpec = z.infer<typeof InvokeSchema>;

export const STATE_TYPES = ['atomic', 'compound', 'parallel', 'final'] as const;
export type StateType = (typeof STATE_TYPES)[number];

export interface StateSpec {
  /** Defaults to `compound` when `states` is present, else `atomic`. */
  type?: StateType;
  description?: string;
  tags?: string[];
  /** Child state entered first (compound states). */
  initial?: string;
  states?: Record<string, StateSpec>;
  on?: Record<string, TransitionSpec>;
  /** Delayed transitions: milliseconds (as a string key) -> transition. */
  after?: Record<string, TransitionSpec>;
  /** Eventless transitions taken as soon as their guard holds. */
  always?: TransitionSpec;
  invoke?: InvokeSpec;
  /** Compound/parallel: taken when a final child is reached (for parallel: when every region is final). */
  onDone?: TransitionSpec;
  /** Top-level final states: what the machine returns, output field -> expression over `context`. */
  output?: Record<string, string>;
  entry?: ActionBlock;
  exit?: ActionBlock;
}

export const StateSchema: z.ZodType<StateSpec> = z.lazy(() =>
  z.strictObject({
    type: z.enum(STATE_TYPES).optional(),
    description: z.string().optional(),
    tags: z.array(z.string()).optional(),
    initial: z.string().optional(),
    states: z.record(z.string(), StateSchema).optional(),
    on: z.record(z.string(), TransitionSchema).optional(),
    after: z.record(z.string(), TransitionSchema).optional(),
    always: TransitionSchema.optional(),
    invoke: InvokeSchema.optional(),
    onDone: TransitionSchema.optional(),
    output: z.record(z.string(), ExpressionSchema).optional(),
    entry: ActionBlockSchema.optional(),
    exit: ActionBlockSchema.optional(),
  }),
);

export const PositionSchema = z.strictObject({
  x: z.number(),
  y: z.number(),
  width: z.number().optional(),
  height: z.number().optional(),
});
export type Position = z.infer<typeof PositionSchema>;

export const NamedDeclarationSchema = z.strictObject({ description: z.string().optional() });

/** Bounds a spec sets for its own sessions; the runtime's limits apply where it sets none. */
export const SpecLimitsSchema = z.strictObject({
  /**
   * Steps (transitions taken) a session may make between two events from outside. Beyond it the event is refused
   * with STEP_LIMIT and the session goes back to the state it was in before that event.
   */
  stepsPerTurn: z.number().int().min(1).optional(),
});
export type SpecLimits = z.infer<typeof SpecLimitsSchema>;
/** What one turn (or one session) of the machine may cost at most; a path over it is a validation error. */
export const BudgetSchema = z.strictObject({
  modelCalls: z.number().int().min(0).optional(),
  toolCalls: z.number().int().min(0).optional(),
  tokens: z.number().int().min(0).optional(),
  /** `turn` (default): every turn, from the start or a waiting state to the next; `session`: every path to a final state. */
  per: z.enum(['turn', 'session']).optional(),
});
export type Budget = z.infer<typeof BudgetSchema>;

export const FlowSpecSchema = z.strictObject({
  $schema: z.string().optional(),
  specVersion: z.literal(SPEC_VERSION),
  /** kebab-case; names the folder, the files and (camelCased) the generated exports. */
  id: z.string(),
  description: z.string().optional(),
  context: FieldMapSchema.default({}),
  /** What the machine returns when it ends in a final state (a machine invoking it reads it as `output`). */
  output: FieldMapSchema.optional(),
  events: z.record(z.string(), FieldMapSchema).default({}),
  guards: z.record(z.string(), NamedDeclarationSchema).optional(),
  actions: z.record(z.string(), NamedDeclarationSchema).optional(),
  /**
   * The channels this machine receives: `listen` names channels or prefixes (`billing.*`); a message on
   * `billing.need_order` arrives as the event `BILLING_NEED_ORDER` (declared in `events` with its payload) at the
   * session whose context field `key` holds the message's key, created for a new key.
   */
  channels: z.strictObject({ listen: z.array(z.string()).min(1), key: z.string() }).optional(),
  /** Model per call kind (`classify`, `extract`, ...) or `default`. */
  models: z.record(z.string(), z.string()).optional(),
  limits: SpecLimitsSchema.optional(),
  initial: z.string().optional(),
  states: z.record(z.string(), StateSchema),
  budget: BudgetSchema.optional(),
  /** State path (dot-separated) -> canvas position. */
  layout: z.record(z.string(), PositionSchema).optional(),
});
export type FlowSpec = z.infer<typeof FlowSpecSchema>;
/** A spec as written in a file, before defaults are applied. */
export type FlowSpecInput = z.input<typeof FlowSpecSchema>;
