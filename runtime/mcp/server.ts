import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FlowingError } from '../errors.ts';
import { expandEnv, expandRecord, type McpServerConfig } from './config.ts';

/** One tool as an MCP server lists it. */
export interface McpListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: McpToolAnnotations;
}

/** The hints an MCP server gives about a tool's effects (MCP's defaults: not read-only, destructive, not idempotent). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpCallResult {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A lazily connected MCP client: connects on first use and again after the server went away. */
export interface McpServer {
  readonly name: string;
  listTools(options?: { timeoutMs?: number }): Promise<McpListedTool[]>;
  callTool(tool: string, args: unknown, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<McpCallResult>;
  close(): Promise<void>;
}

// The SDK is an optional peer: loaded on the first connection, so a service without MCP servers never needs it.
type SdkClient = import('@modelcontextprotocol/sdk/client/index.js').Client;

/** A connected client and, for a stdio server, a switch that lets its process hold the event loop or not. */
interface Connection {
  client: SdkClient;
  hold(held: boolean): void;
}

/**
 * An MCP server reached over stdio (`command`) or streamable HTTP (`url`).
 * @example const docs = mcpServer('docs', { command: 'node', args: ['docs-server.js'] })
 */
export function mcpServer(name: string, config: McpServerConfig): McpServer {
  let connecting: Promise<Connection> | undefined;
  let busy = 0;

  const connect = (): Promise<Connection> => {
    connecting ??= open(name, config).then(
      (connection) => {
        // A closed transport (the server exited, the connection dropped) makes the next call connect afresh.
        connection.client.onclose = () => {
          connecting = undefined;
        };
        connection.hold(busy > 0);
        return connection;
      },
      (error: unknown) => {
        connecting = undefined;
        throw new FlowingError('MCP_UNAVAILABLE', `MCP server '${name}' could not be reached: ${messageOf(error)}`, { cause: error });
      },
    );
    return connecting;
  };

  // Requests in flight hold the event loop through the server process; an idle connection never does.
  const whileBusy = async <T>(work: () => Promise<T>): Promise<T> => {
    busy += 1;
    if (busy === 1)
      void connecting?.then(
        (connection) => connection.hold(busy > 0),
        () => undefined,
      );
    try {
      return await work();
    } finally {
      busy -= 1;
      if (busy === 0)
        void connecting?.then(
          (connection) => connection.hold(busy > 0),
          () => undefined,
        );
    }
  };

  const call = async (tool: string, args: unknown, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<McpCallResult> => {
    const { client } = await connect();
    try {
      return (await client.callTool({ name: tool, arguments: (args ?? {}) as Record<string, unknown> }, undefined, {
        signal: options.signal,
        timeout: options.timeoutMs,
      })) as McpCallResult;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (isConnectionClosed(error)) {
        connecting = undefined;
        throw new FlowingError('MCP_SERVER_CLOSED', `MCP server '${name}' went away while '${tool}' was running`, { cause: error });
      }
      throw new FlowingError('MCP_CALL_FAILED', `MCP server '${name}' failed '${tool}': ${messageOf(error)}`, { cause: error });
    }
  };

  const server: McpServer = {
    name,
    listTools(options = {}) {
      return whileBusy(async () => {
        const { client } = await connect();
        const tools: McpListedTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: options.timeoutMs ?? 30_000 });
          tools.push(...(page.tools as McpListedTool[]));
          cursor = page.nextCursor;
        } while (cursor);
        return tools;
      });
    },
    callTool(tool, args, options) {
      return whileBusy(() => call(tool, args, options));
    },
    async close() {
      const pending = connecting;
      connecting = undefined;
      const connection = await pending?.catch(() => undefined);
      // Closing waits for the server process to exit, which an unref'd process would not keep the loop alive for.
      connection?.hold(true);
      await connection?.client.close();
    },
  };
  openServers.add(server);
  return server;
}

const openServers = new Set<McpServer>();

/** Closes every MCP connection this process opened (for a service's shutdown, and for tests). */
export async function closeMcpServers(): Promise<void> {
  await Promise.all([...openServers].map((server) => server.close()));
}

async function open(name: string, config: McpServerConfig): Promise<Connection> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js').catch((error: unknown) => {
    throw new FlowingError(
      'MCP_UNAVAILABLE',
      `MCP tools need the package @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk`,
      {
        cause: error,
      },
    );
  });
  const client = new Client({ name: 'flowing', version: '1' });
  if ('url' in config) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const headers = expandRecord(config.headers, name);
    await client.connect(new StreamableHTTPClientTransport(new URL(expandEnv(config.url, name)), { requestInit: { headers } }));
    return { client, hold: () => undefined };
  }
  const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const cwd = config.cwd instanceof URL ? fileURLToPath(config.cwd) : config.cwd;
  const transport = new StdioClientTransport({
    command: expandEnv(config.command, name),
    args: config.args?.map((arg) => expandEnv(arg, name)),
    env: { ...getDefaultEnvironment(), ...expandRecord(config.env, name) },
    cwd,
    stderr: 'inherit',
  });
  await client.connect(transport);
  // The SDK keeps the server process in a private field; without it the process simply always holds the loop.
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  const handles = [child, child?.stdin, child?.stdout] as Array<{ ref?: () => void; unref?: () => void } | null | undefined>;
  return {
    client,
    hold: (held) => {
      for (const handle of handles) (held ? handle?.ref : handle?.unref)?.call(handle);
    },
  };
}

/** The SDK rejects the requests in flight with code -32000 (ConnectionClosed) when the transport closes. */
function isConnectionClosed(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === -32000;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
