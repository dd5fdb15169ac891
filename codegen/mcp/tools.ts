import { mcpContract, mcpToolName } from '@flowing/spec';
import { toolExportName } from '../names.ts';
import type { ToolCatalogEntry } from '../tool-catalog.ts';
import { zodSource } from './json-schema-zod.ts';
import { snapshotFile, toolsModuleFile, type McpProject, type McpProjectServer } from './project.ts';

/** What an MCP tool without an output schema returns (`mcpTextOutput` in the runtime). */
const TEXT_OUTPUT_SCHEMA = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

/** Every tool of every snapshotted server as a catalog entry (file: the server's generated module). */
export function mcpCatalogEntries(project: McpProject): ToolCatalogEntry[] {
  const entries: ToolCatalogEntry[] = [];
  for (const server of project.servers) {
    for (const tool of server.snapshot?.tools ?? []) {
      const name = mcpToolName(server.name, tool.name);
      const properties = tool.inputSchema.properties;
      const fields = properties && typeof properties === 'object' ? Object.keys(properties) : [];
      const required = Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as string[]) : [];
      entries.push({
        name,
        description: tool.description ?? `${server.name}/${tool.name}`,
        ...mcpContract(tool.annotations),
        errors: ['MCP_TOOL_ERROR', 'MCP_SERVER_CLOSED', 'MCP_UNAVAILABLE', 'MCP_CALL_FAILED'],
        inputFields: fields,
        requiredInputFields: required.filter((f) => fields.includes(f)),
        file: toolsModuleFile(server.name),
        exportName: toolExportName(name),
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema ?? TEXT_OUTPUT_SCHEMA,
        mcp: { server: server.name, tool: tool.name },
      });
    }
  }
  return entries;
}

/**
 * `mcp/<server>.tools.ts`: one Flowing tool per tool of the server's snapshot, with zod schemas written out so the
 * machines that use them type-check against the server's own schemas, offline.
 */
export function emitMcpToolsModule(server: McpProjectServer): { path: string; text: string } {
  const lines = [
    `// Generated from ${snapshotFile(server.name)} by flowing codegen — do not edit.`,
    '// Refresh the snapshot with `flowing mcp pull`, then run `flowing codegen`.',
    'import { z } from "zod";',
    'import { mcpServer, mcpTool } from "@flowing/runtime/mcp";',
    '',
    `const server = mcpServer(${JSON.stringify(server.name)}, ${JSON.stringify(server.config)});`,
  ];
  for (const tool of server.snapshot?.tools ?? []) {
    const name = mcpToolName(server.name, tool.name);
    lines.push(
      '',
      `export const ${toolExportName(name)} = mcpTool({`,
      '  server,',
      `  tool: ${JSON.stringify(tool.name)},`,
      `  name: ${JSON.stringify(name)},`,
      `  description: ${JSON.stringify(tool.description ?? `${server.name}/${tool.name}`)},`,
      `  input: ${zodSource(tool.inputSchema)},`,
      ...(tool.outputSchema ? [`  output: ${zodSource(tool.outputSchema)},`] : []),
      ...(tool.annotations ? [`  annotations: ${JSON.stringify(tool.annotations)},`] : []),
      '});',
    );
  }
  return { path: toolsModuleFile(server.name), text: lines.join('\n') + '\n' };
}
