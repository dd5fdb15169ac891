export { defineTool, ToolError, DEFAULT_TOOL_RETRIES, DEFAULT_TOOL_TIMEOUT_MS, type Tool, type AnyTool, type ToolConfig, type ToolRisk, type ToolRunContext, type ToolInput, type ToolOutput } from './tool.ts';
export { FlowingError, toFlowError, RUNTIME_ERROR_CODES, type FlowError, type RuntimeErrorCode } from './errors.ts';
export { fromTool, fromLlm, asText, runToolOnce, toolActorName, llmActorName, type ToolCallInput } from './actors.ts';
export { defineMachine, type MachineDefinition, type AnyMachineDefinition, type EventOf } from './definition.ts';
export { createScriptedProvider } from './llm/scripted.ts';
export type {
  LlmProvider, LlmRequest, LlmResult, LlmUsage, LlmCallOptions, ClassifyRequest, ExtractRequest, GenerateRequest, AgentRequest,
  ClassifyOutput, ExtractOutput, GenerateOutput, AgentOutput, AgentToolCaller,
} from './llm/types.ts';
