/**
 * MCP tools as Flowing tools (`@flowing/runtime/mcp`). Needs the optional peer `@modelcontextprotocol/sdk`.
 * Generated `mcp/<server>.tools.ts` modules use `mcpServer` and `mcpTool`; `flowing mcp pull` uses `snapshotServer`.
 */
export type { McpHttpConfig, McpServerConfig, McpStdioConfig } from './config.ts';
export { closeMcpServers, mcpServer, type McpCallResult, type McpListedTool, type McpServer, type McpToolAnnotations } from './server.ts';
export { snapshotServer, type McpSnapshot } from './snapshot.ts';
export { mcpTextOutput, mcpTool, type McpToolDefinition } from './tool.ts';
