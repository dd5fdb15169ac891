import type { McpListedTool, McpServer } from './server.ts';

/** What `flowing mcp pull` stores per server: the tools it lists, in a stable order, nothing that varies per run. */
export interface McpSnapshot {
  server: string;
  tools: McpListedTool[];
}

/** Lists a server's tools as a snapshot (sorted by name, only the fields a contract depends on). */
export async function snapshotServer(server: McpServer, options: { timeoutMs?: number } = {}): Promise<McpSnapshot> {
  const tools = await server.listTools(options);
  return {
    server: server.name,
    tools: tools
      .map(({ name, description, inputSchema, outputSchema, annotations }) => ({
        name,
        ...(description !== undefined ? { description } : {}),
        inputSchema,
        ...(outputSchema !== undefined ? { outputSchema } : {}),
        ...(annotations !== undefined ? { annotations } : {}),
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}
