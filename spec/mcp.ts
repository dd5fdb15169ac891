/** The hints an MCP server gives about a tool's effects. */
export interface McpToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
}

/**
 * How MCP's hints map onto a Flowing tool contract. MCP's defaults are conservative (a tool is destructive unless it
 * says otherwise), and so is this: only a read-only tool is low risk, only a tool that is read-only or idempotent by
 * its own word is retried, and a destructive one is high risk and therefore runs only after an approval.
 */
export function mcpContract(hints: McpToolHints = {}): { risk: 'low' | 'medium' | 'high'; idempotent: boolean } {
  const readOnly = hints.readOnlyHint === true;
  const risk = readOnly ? 'low' : hints.destructiveHint === false ? 'medium' : 'high';
  return { risk, idempotent: readOnly || hints.idempotentHint === true };
}

/** A server's tool as a Flowing tool name: `<server>_<tool in snake_case>` (`docs` + `searchPages` -> `docs_search_pages`). */
export function mcpToolName(server: string, tool: string): string {
  const snake = tool
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return `${server}_${snake || 'tool'}`;
}
