import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A real MCP server for tests, built with the SDK's server classes. `variant: 2` changes one tool's input schema (the
 * drift case). Destructive calls are appended to `callLog`, one line each, so a test can count them.
 */
export function docsServer(options: { variant?: number; callLog?: string; exit?: () => void } = {}): McpServer {
  const server = new McpServer({ name: 'docs-fixture', version: '1.0.0' });
  const searchInput: z.ZodRawShape =
    options.variant === 2 ? { query: z.string(), lang: z.enum(['en', 'de']) } : { query: z.string(), limit: z.number().int().optional() };
  server.registerTool(
    'search_docs',
    { description: 'Searches the docs.', inputSchema: searchInput, annotations: { readOnlyHint: true } },
    async (args: { query?: unknown }) => ({ content: [{ type: 'text', text: `3 pages match "${String(args.query)}"` }] }),
  );
  server.registerTool(
    'lookupPage',
    {
      description: 'One page by id.',
      inputSchema: { id: z.string() },
      outputSchema: { id: z.string(), title: z.string(), tags: z.array(z.string()) },
      annotations: { readOnlyHint: true },
    },
    async ({ id }) => {
      const page = { id, title: `Page ${id}`, tags: ['guide'] };
      return { content: [{ type: 'text', text: JSON.stringify(page) }], structuredContent: page };
    },
  );
  server.registerTool(
    'delete_page',
    { description: 'Deletes a page.', inputSchema: { id: z.string() }, annotations: { destructiveHint: true } },
    async ({ id }) => {
      if (options.callLog) appendFileSync(options.callLog, `delete ${id}\n`);
      return { content: [{ type: 'text', text: `deleted ${id}` }] };
    },
  );
  server.registerTool(
    'fail_page',
    { description: 'Always answers with an error result.', inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } },
    async ({ id }) => ({ isError: true, content: [{ type: 'text', text: `page ${id} is locked` }] }),
  );
  server.registerTool(
    'crash',
    { description: 'The server process dies while answering.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async () => {
      (options.exit ?? (() => process.exit(1)))();
      return { content: [] };
    },
  );
  return server;
}

/** The same server over streamable HTTP on a loopback port (stateless: a server per request, as the SDK shows). */
export async function startHttpDocsServer(
  options: { variant?: number; callLog?: string } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const server = docsServer(options);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

// Run as a program: the stdio server (`node --import tsx test/helpers/mcp-server.ts`).
if (import.meta.url === `file://${process.argv[1]}`) {
  // The variant is read from a file, so a test changes the server without changing flowing.mcp.json.
  const variantFile = process.env.MCP_FIXTURE_VARIANT_FILE;
  const variant = variantFile && existsSync(variantFile) ? Number(readFileSync(variantFile, 'utf8').trim()) : 1;
  const server = docsServer({ variant, callLog: process.env.MCP_FIXTURE_LOG });
  await server.connect(new StdioServerTransport());
}
