import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** The file that declares a project's MCP servers. */
export const MCP_CONFIG_FILE = 'flowing.mcp.json';
/** Where each server's tool snapshot and generated module live. */
export const MCP_DIR = 'mcp';

export const snapshotFile = (server: string) => `${MCP_DIR}/${server}.snapshot.json`;
export const toolsModuleFile = (server: string) => `${MCP_DIR}/${server}.tools.ts`;

const stringMap = z.record(z.string(), z.string());
const ServerConfigSchema = z.union([
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: stringMap.optional(),
    cwd: z.string().optional(),
  }),
  z.strictObject({ url: z.string().min(1), headers: stringMap.optional() }),
]);
export type McpServerEntry = z.infer<typeof ServerConfigSchema>;

const ConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  servers: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'server names are snake_case (a-z, 0-9, _)'), ServerConfigSchema),
});

const AnnotationsSchema = z
  .object({
    title: z.string().optional(),
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .optional();

const SnapshotSchema = z.strictObject({
  server: z.string(),
  tools: z.array(
    z.strictObject({
      name: z.string().min(1),
      description: z.string().optional(),
      inputSchema: z.record(z.string(), z.unknown()),
      outputSchema: z.record(z.string(), z.unknown()).optional(),
      annotations: AnnotationsSchema,
    }),
  ),
});
export type McpSnapshotFile = z.infer<typeof SnapshotSchema>;

export interface McpProjectServer {
  name: string;
  config: McpServerEntry;
  /** Undefined until `flowing mcp pull` wrote it. */
  snapshot: McpSnapshotFile | undefined;
}

export interface McpProject {
  servers: McpProjectServer[];
  /** What is wrong with the config or a snapshot, each naming its file. */
  problems: Array<{ file: string; message: string }>;
}

/** Reads `flowing.mcp.json` and each server's snapshot; a project without the file has no MCP servers. */
export async function loadMcpProject(rootDir: string): Promise<McpProject> {
  const problems: McpProject['problems'] = [];
  const configText = await readFile(join(rootDir, MCP_CONFIG_FILE), 'utf8').catch(() => undefined);
  if (configText === undefined) return { servers: [], problems };
  const config = parseJson(configText, ConfigSchema);
  if (!config.ok) return { servers: [], problems: [{ file: MCP_CONFIG_FILE, message: config.message }] };
  const servers: McpProjectServer[] = [];
  for (const [name, entry] of Object.entries(config.value.servers).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const file = snapshotFile(name);
    const text = await readFile(join(rootDir, file), 'utf8').catch(() => undefined);
    let snapshot: McpSnapshotFile | undefined;
    if (text === undefined) {
      problems.push({ file, message: `no snapshot of MCP server '${name}'; run \`flowing mcp pull\`` });
    } else {
      const parsed = parseJson(text, SnapshotSchema);
      if (parsed.ok) snapshot = parsed.value;
      else problems.push({ file, message: parsed.message });
    }
    servers.push({ name, config: entry, snapshot });
  }
  return { servers, problems };
}

function parseJson<T>(text: string, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `not JSON: ${(error as Error).message}` };
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, message: `${issue.path.length ? `/${issue.path.join('/')}: ` : ''}${issue.message}` };
}
