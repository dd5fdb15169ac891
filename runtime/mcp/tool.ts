import { z } from 'zod';
import { DEFAULT_TOOL_RETRIES, DEFAULT_TOOL_TIMEOUT_MS, defineTool, ToolError, type Tool } from '../tool.ts';
import { mcpContract } from '@flowing/spec';
import type { McpCallResult, McpServer, McpToolAnnotations } from './server.ts';

/** What an MCP tool without an output schema gives a machine: its text content. */
export const mcpTextOutput = z.object({ text: z.string() });

export interface McpToolDefinition<TInput extends z.ZodType, TOutput extends z.ZodType> {
  server: McpServer;
  /** The tool's name on its server. */
  tool: string;
  /** Its Flowing name (snake_case, unique in the project). */
  name: string;
  description: string;
  input: TInput;
  /** The tool's declared output schema (its `structuredContent`); without one the output is `{ text }`. */
  output?: TOutput;
  annotations?: McpToolAnnotations;
  timeoutMs?: number;
}

/**
 * A Flowing tool that calls a tool of an MCP server, with the same contract as a local tool: input and output
 * checked, the call's timeout and cancel passed to the server, retries only when the server marks it safe.
 */
export function mcpTool<TInput extends z.ZodType, TOutput extends z.ZodType = typeof mcpTextOutput>(
  definition: McpToolDefinition<TInput, TOutput>,
): Tool<TInput, TOutput> {
  const { server, tool } = definition;
  const { risk, idempotent } = mcpContract(definition.annotations);
  const timeoutMs = definition.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const structured = definition.output !== undefined;
  return defineTool({
    name: definition.name,
    description: definition.description,
    input: definition.input,
    output: (definition.output ?? mcpTextOutput) as TOutput,
    timeoutMs,
    idempotent,
    retries: idempotent ? DEFAULT_TOOL_RETRIES : 0,
    risk,
    errors: {
      MCP_TOOL_ERROR: 'the server answered the call with an error result',
      MCP_SERVER_CLOSED: 'the server went away while the call was running',
      MCP_UNAVAILABLE: 'the server could not be reached',
      MCP_CALL_FAILED: 'the server refused the request',
    },
    async run(input, { signal }) {
      // The runtime's own timeout aborts `signal` first; the SDK's is only a backstop.
      const result = await server.callTool(tool, input, { signal, timeoutMs: timeoutMs + 1_000 });
      const text = textOf(result);
      if (result.isError) throw new ToolError('MCP_TOOL_ERROR', `${server.name}/${tool}: ${text.slice(0, 500) || 'error result'}`);
      return (structured ? result.structuredContent : { text }) as z.input<TOutput>;
    },
  });
}

function textOf(result: McpCallResult): string {
  return (result.content ?? [])
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}
