import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { ToolInfo } from '@flowing/spec';
import { explainImportFailure } from './import-failure.ts';
import { loadMcpProject } from './mcp/project.ts';
import { mcpCatalogEntries } from './mcp/tools.ts';

/** A tool found in tools/: what the validator needs, plus its file, export and JSON Schemas for the studio. */
export interface ToolCatalogEntry extends ToolInfo {
  file: string;
  exportName: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  /** Set for a tool of an MCP server (declared in flowing.mcp.json, snapshotted in mcp/). */
  mcp?: { server: string; tool: string };
}

export type ToolCatalog = Record<string, ToolCatalogEntry>;

interface ToolLike {
  name: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  idempotent: boolean;
  risk: 'low' | 'medium' | 'high';
  errors: Record<string, string>;
  retries?: number;
  run: unknown;
}

function isTool(value: unknown): value is ToolLike {
  if (!value || typeof value !== 'object') return false;
  const v = value as Partial<ToolLike>;
  return typeof v.name === 'string' && typeof v.run === 'function' && v.input instanceof z.ZodType && v.output instanceof z.ZodType;
}

/**
 * Loads every tool declared in `<rootDir>/tools/*.ts` (one `defineTool` export per file, the file named after the
 * tool). Modules are re-imported when their file changed, so a long-lived studio sees edits. A file that cannot be
 * imported is left out and reported to `onError` with an error whose message names the cause.
 */
export async function loadToolCatalog(
  rootDir: string,
  options: { onError?: (file: string, error: unknown) => void } = {},
): Promise<ToolCatalog> {
  const dir = join(rootDir, 'tools');
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => /^[a-z][a-z0-9_]*\.ts$/.test(f)).sort();
  } catch {
    return {};
  }
  const catalog: ToolCatalog = {};
  for (const file of files) {
    const path = join(dir, file);
    let module: Record<string, unknown>;
    try {
      const { mtimeMs } = await stat(path);
      module = (await import(`${pathToFileURL(path).href}?v=${Math.floor(mtimeMs)}`)) as Record<string, unknown>;
    } catch (error) {
      // One broken tool file must not take every spec down with it; its tools are simply absent.
      options.onError?.(`tools/${file}`, new Error(explainImportFailure(rootDir, path, error), { cause: error }));
      continue;
    }
    for (const [exportName, value] of Object.entries(module)) {
      if (!isTool(value) || `${value.name}.ts` !== file) continue;
      catalog[value.name] = describeTool(value, relative(rootDir, path).split('\\').join('/'), exportName);
    }
  }
  await addMcpTools(rootDir, catalog, options.onError);
  return catalog;
}

/** The tools of the project's MCP servers, from their snapshots (never by connecting: generation stays offline). */
async function addMcpTools(rootDir: string, catalog: ToolCatalog, onError?: (file: string, error: unknown) => void): Promise<void> {
  const project = await loadMcpProject(rootDir);
  for (const problem of project.problems) onError?.(problem.file, new Error(problem.message));
  for (const entry of mcpCatalogEntries(project)) {
    const other = catalog[entry.name];
    if (other) {
      const owner = other.mcp ? `MCP tool ${other.mcp.server}/${other.mcp.tool}` : other.file;
      onError?.(
        entry.file,
        new Error(`MCP tool ${entry.mcp!.server}/${entry.mcp!.tool} is named ${entry.name}, like ${owner}; rename one`),
      );
      continue;
    }
    catalog[entry.name] = entry;
  }
}

function describeTool(tool: ToolLike, file: string, exportName: string): ToolCatalogEntry {
  const shape = tool.input instanceof z.ZodObject ? (tool.input.shape as Record<string, z.ZodType>) : undefined;
  return {
    name: tool.name,
    description: tool.description,
    idempotent: tool.idempotent,
    risk: tool.risk,
    errors: Object.keys(tool.errors ?? {}),
    ...(typeof tool.retries === 'number' ? { retries: tool.retries } : {}),
    inputFields: shape ? Object.keys(shape) : undefined,
    requiredInputFields: shape
      ? Object.entries(shape)
          .filter(([, s]) => !s.safeParse(undefined).success)
          .map(([k]) => k)
      : undefined,
    file,
    exportName,
    inputSchema: toJsonSchema(tool.input),
    outputSchema: toJsonSchema(tool.output),
  };
}

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  try {
    return z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return {};
  }
}
