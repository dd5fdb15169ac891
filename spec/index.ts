export {
  SPEC_VERSION,
  LLM_KINDS,
  STATE_TYPES,
  FlowSpecSchema,
  FieldTypeSchema,
  StateSchema,
  type FlowSpec,
  type FlowSpecInput,
  type FieldType,
  type FieldMap,
  type StateSpec,
  type StateType,
  type TransitionSpec,
  type TransitionObject,
  type GuardSpec,
  type InvokeSpec,
  type ToolInvokeSpec,
  type LlmInvokeSpec,
  type MachineInvokeSpec,
  type LlmKind,
  type ActionBlock,
  type Position,
  type ScriptedRules,
  type SpecLimits,
  type Budget,
  type AgentToolSpec,
  type EmitSpec,
  type BoundToolSpec,
  type MemorySpec,
  agentToolName,
  handoffToolName,
  HANDOFF_TOOL_PREFIX,
} from './schema.ts';
export { memoryFacts, SUMMARY_CONTENT_FIELD } from './memory.ts';
export { SPEC_PROBLEM_CODES, hasErrors, pointer, type SpecProblem, type SpecProblemCode, type Severity } from './problems.ts';
export {
  validateSpec,
  historyField,
  MAX_STATE_DEPTH,
  MACHINE_ID_PATTERN,
  NAME_PATTERN,
  EVENT_PATTERN,
  TOOL_NAME_PATTERN,
  LABEL_PATTERN,
  type ToolInfo,
  type ValidateOptions,
  type ValidationResult,
} from './validate.ts';
export { parseSpecText, jsonNestingDepth } from './parse.ts';
export { schemaProblems } from './schema-issues.ts';
export { machineInvokes } from './machine-checks.ts';
export {
  RESERVED_NAMES,
  RESERVED_WORDS,
  RESERVED_FILE_NAMES,
  isReservedWord,
  generatedIdentifier,
  toolExportProblem,
  toolNameProblem,
  machineIdProblem,
} from './identifiers.ts';
export {
  parseExpression,
  compileExpression,
  evaluateExpression,
  parseTemplate,
  compileTemplate,
  type ExprNode,
  type ExpressionRoot,
  type ExpressionError,
  type RootMapping,
  type TemplatePart,
} from './expression.ts';
export {
  listStates,
  stateType,
  transitionSites,
  normalizeTransition,
  type StateEntry,
  type TransitionSite,
  type NormalizedTransition,
} from './walk.ts';
export {
  fieldTypeToZod,
  fieldMapToZod,
  eventPayloadSchemas,
  contextSchema,
  defaultContext,
  fieldDefault,
  isRequiredInput,
} from './fields.ts';
export { formatSpec } from './format.ts';
export {
  escapeControlCharacters,
  pointerForDisplay,
  formatProblemLine,
  problemForJson,
  stringifyJsonSafely,
  type PrintableProblem,
} from './escape.ts';
export { flowSpecJsonSchema } from './json-schema.ts';
export { MAX_LLM_REPAIRS, DEFAULT_AGENT_ITERATIONS, AGENT_TOOL_CALLS_PER_ITERATION, DEFAULT_TOOL_RETRIES } from './call-limits.ts';
export {
  computeCost,
  budgetProblems,
  describeSteps,
  describeRow,
  callBound,
  invokedMachine,
  costForJson,
  formatAmount,
  addCost,
  maxCost,
  METRICS,
  METRIC_NAMES,
  type Cost,
  type Metric,
  type CostOptions,
  type CostRow,
  type CostStep,
  type CostLoop,
  type CallBound,
  type MachineCost,
} from './cost/index.ts';
export { mcpContract, mcpToolName, type McpToolHints } from './mcp.ts';
export {
  CHANNEL_PATTERN,
  LISTEN_PATTERN,
  channelEventType,
  channelRoutes,
  checkChannelProject,
  emitSites,
  listensTo,
  overlappingRoutes,
  patternsOverlap,
  routeOf,
  type ChannelProblem,
  type ChannelRoute,
  type EmitSite,
} from './channels.ts';
export {
  ConversationSchema,
  ConversationMessageSchema,
  ConversationToolCallSchema,
  type Conversation,
  type ConversationMessage,
  type ConversationToolCall,
} from './conversation.ts';
