import { isAbsolute, join } from 'node:path';
import type { McpProjectServer } from '@flowing/codegen';
import { mcpServer, snapshotServer, type McpServerConfig, type McpSnapshot } from '@flowing/runtime/mcp';

/** A server of flowing.mcp.json as the runtime connects to it, its working folder resolved from the project root. */
export function connectProjectServer(server: McpProjectServer, rootDir: string) {
  const config = server.config;
  const resolved: McpServerConfig =
    'url' in config
      ? config
      : { ...config, cwd: config.cwd === undefined ? rootDir : isAbsolute(config.cwd) ? config.cwd : join(rootDir, config.cwd) };
  return mcpServer(server.name, resolved);
}

/** Connects, lists the server's tools as a snapshot, and disconnects. */
export async function pullSnapshot(server: McpProjectServer, rootDir: string): Promise<McpSnapshot> {
  const client = connectProjectServer(server, rootDir);
  try {
    return await snapshotServer(client, { timeoutMs: 15_000 });
  } finally {
    await client.close();
  }
}

/** The snapshot file's text: stable, so an unchanged server rewrites it byte for byte. */
export function snapshotText(snapshot: McpSnapshot): string {
  return JSON.stringify(snapshot, null, 2) + '\n';
}
