import type { ToolInfo } from '@flowing/spec';
import type { ToolSummary } from '../api.ts';

/** What the validator needs to know about the tools the server listed (input fields read from the JSON Schema). */
export function toToolInfos(tools: readonly ToolSummary[]): Record<string, ToolInfo> {
  const out: Record<string, ToolInfo> = {};
  for (const tool of tools) {
    const properties = tool.inputSchema?.properties ?? {};
    out[tool.name] = {
      name: tool.name,
      description: tool.description,
      idempotent: tool.idempotent,
      risk: tool.risk,
      errors: tool.errors,
      ...(tool.retries === undefined ? {} : { retries: tool.retries }),
      inputFields: Object.keys(properties),
      requiredInputFields: tool.inputSchema?.required ?? [],
    };
  }
  return out;
}
