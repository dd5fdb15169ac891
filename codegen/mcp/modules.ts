import type { FlowSpec } from '@flowing/spec';
import { toolsUsedBy } from '../emit/registry.ts';
import type { ToolCatalog } from '../tool-catalog.ts';
import { loadMcpProject } from './project.ts';
import { emitMcpToolsModule } from './tools.ts';

/** The generated `mcp/<server>.tools.ts` modules of the MCP servers whose tools a spec uses. */
export async function mcpModulesFor(spec: FlowSpec, tools: ToolCatalog, rootDir: string): Promise<Array<{ path: string; text: string }>> {
  const used = new Set(toolsUsedBy(spec).flatMap((name) => (tools[name]?.mcp ? [tools[name].mcp.server] : [])));
  if (used.size === 0) return [];
  const project = await loadMcpProject(rootDir);
  return project.servers.filter((server) => used.has(server.name) && server.snapshot).map(emitMcpToolsModule);
}
