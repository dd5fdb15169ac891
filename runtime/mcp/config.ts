import { FlowingError } from '../errors.ts';

/** How to reach one MCP server: a command speaking stdio, or a streamable HTTP endpoint. */
export type McpServerConfig = McpStdioConfig | McpHttpConfig;

export interface McpStdioConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  /** Working directory of the server process (a path or a `file:` URL); the service's own when absent. */
  cwd?: string | URL;
}

export interface McpHttpConfig {
  url: string;
  headers?: Record<string, string>;
}

/**
 * Replaces `${NAME}` with the environment variable NAME, so a committed config can name secrets and hosts without
 * holding them. A variable that is not set is an error naming it, never an empty string sent to a server.
 */
export function expandEnv(value: string, server: string, env: NodeJS.ProcessEnv = process.env): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const found = env[name];
    if (found === undefined) {
      throw new FlowingError('MCP_CONFIG_INVALID', `MCP server '${server}' needs the environment variable ${name}, which is not set`);
    }
    return found;
  });
}

export function expandRecord(record: Record<string, string> | undefined, server: string): Record<string, string> | undefined {
  if (!record) return undefined;
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expandEnv(value, server)]));
}
