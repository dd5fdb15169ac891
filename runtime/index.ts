export { EVENT_IDS_KEPT, MAX_EVENT_ID_LENGTH } from './constants.ts';
export {
  defineTool,
  ToolError,
  DEFAULT_TOOL_RETRIES,
  DEFAULT_TOOL_TIMEOUT_MS,
  type Tool,
  type AnyTool,
  type ToolConfig,
  type ToolRisk,
  type ToolRunContext,
  type ToolInput,
  type ToolOutput,
  type ToolExample,
  type ToolErrorExample,
  type ToolSchema,
} from './tool.ts';
export { FlowingError, toFlowError, RUNTIME_ERROR_CODES, type FlowError, type RuntimeErrorCode } from './errors.ts';
export { fromTool, fromLlm, fromMachine, asText } from './actors.ts';
export { appendMessage } from './llm/history.ts';
export type { ConversationMessage, ConversationToolCall } from '@flowing/spec';
export type { ToolCallInput } from './calls/context.ts';
export {
  defineMachine,
  contractOf,
  type MachineDefinition,
  type MachineDefinitionConfig,
  type MachineContract,
  type InvokeInfo,
  type ToolInvokeInfo,
  type LlmInvokeInfo,
  type AnyMachineDefinition,
  type EventOf,
} from './definition.ts';
export { createScriptedProvider } from './llm/scripted.ts';
export type {
  LlmProvider,
  LlmRequest,
  LlmResult,
  LlmUsage,
  LlmCallOptions,
  ClassifyRequest,
  ExtractRequest,
  GenerateRequest,
  AgentRequest,
  ClassifyOutput,
  ExtractOutput,
  GenerateOutput,
  AgentOutput,
  AgentHandoff,
  AgentStep,
  StructuredAgentOutput,
  AgentToolCaller,
} from './llm/types.ts';
export {
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  type Session,
  type SessionEvent,
  type SessionSnapshot,
  type SendOptions,
  type CancelResult,
} from './runtime.ts';
export type { SendResult } from './session/run.ts';
export type { EventListener, SubscriptionErrorListener } from './session/subscriptions.ts';
export { RUNTIME_EVENT_TYPES, type RuntimeEvent, type RuntimeEventType } from './events.ts';
export { createMemoryStore, type MemoryStore, type MemoryStoreData } from './store/memory.ts';
export type {
  SessionStore,
  SessionRecord,
  EventIdRecord,
  SessionStatus,
  JournalEntry,
  CommitRequest,
  ApprovalRecord,
  SessionQuery,
  SessionSummary,
  SessionPage,
  StoreFeedListener,
  StoreDurability,
  StoreWriteFailure,
} from './store/types.ts';
export { STORE_ERROR_CODES, type StoreErrorCode } from './store/errors.ts';
export { systemClock, type Clock } from './clock.ts';
export { createVirtualClock, settle, type VirtualClock } from './virtual-clock.ts';
export { Deadline, type DeadlineOptions } from './deadline.ts';
export type { RuntimeLimits } from './limits.ts';
export { argsHash, stableJson } from './session/approvals.ts';
export { replaySession, reexecuteSession, type ReplayOptions, type ReexecuteOptions, type ReplayResult } from './replay.ts';
export { createRecordedCalls, type RecordedCalls, type RecordedCallsOptions, type RecordedCallInfo } from './inspect/recorded-calls.ts';
// Inspection's wire protocol (the fold, session files, codes) comes from @flowing/protocol, re-exported for services.
export {
  INSPECT_ERROR_CODES,
  sessionAt,
  foldEvent,
  activeStatePaths,
  EMPTY_SESSION_AT,
  parseSessionFile,
  sessionFileSpecNotice,
  SESSION_FILE_KIND,
  SESSION_FILE_FORMAT_VERSION,
  MAX_SESSION_FILE_LINE_CHARS,
  MAX_SESSION_FILE_CHARS,
  type InspectErrorCode,
  type SessionAt,
  type FoldableEvent,
  type PendingCall,
  type ApprovalAt,
  type RejectionAt,
  type SessionFile,
  type SessionFileHeader,
  type SessionFileProblem,
  type SessionFileRefusal,
} from '@flowing/protocol';
export { exportSession, exportSessionFile, exportSessionStream, type SessionExport, type SessionExportStream } from './inspect/export.ts';
export { requestHash } from './inspect/request-hash.ts';
export { createXStateTrace, type XStateRecord, type XStateTrace, type XStateTraceOptions } from './inspect/xstate-trace.ts';
export type { InspectionSource, XStateInspector } from './session/host.ts';
export { defineMigration, type MigrationHook, type AnyMigrationHook } from './migrate/hook.ts';
export type { StaleReason, StaleReasonCode } from './migrate/plan.ts';
export type { StaleSession, StaleInfo } from './migrate/list.ts';
export type { MigrationReport } from './migrate/run-migrations.ts';
export type { MigratedData } from './migrate/carry.ts';
export type { TracerLike, SpanLike, SpanOptionsLike } from './trace/types.ts';
export { trimToWindow } from './conversation/window.ts';
export { assemblePrompt, type AssembledPrompt, type PromptBudget } from './conversation/assemble.ts';
export { summaryDue, summaryRequest, summaryMessage, type SummaryPlan, type SummaryMessage } from './conversation/summary.ts';
export { loadTokenCounter, messagesTokens, CHARS_PER_TOKEN_ESTIMATE, type TokenCounter } from './conversation/tokens.ts';
export { applyMemory, type MemoryOutcome, type Summarize } from './calls/llm-memory.ts';
