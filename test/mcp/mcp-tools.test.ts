import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, createRuntime, type RuntimeEvent } from '@flowing/runtime';
import { closeMcpServers, mcpServer, mcpTool, snapshotServer } from '@flowing/runtime/mcp';
import { parseSpecText } from '@flowing/spec';
import { createCodegen, loadToolCatalog } from '../../codegen/index.ts';
import { startHttpDocsServer } from '../helpers/mcp-server.ts';
import { startStudioServer } from '../helpers/studio-server.ts';
import { DOCS_DESK_SPEC, mcpProject, runCli, stdioServerEntry } from './fixture-project.ts';

const SPEC_FILE = 'machines/docs-desk/docs-desk.flow.json';
const types = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

let project: Awaited<ReturnType<typeof mcpProject>>;
let callLog: string;
let variantFile: string;
beforeAll(async () => {
  project = await mcpProject({});
  callLog = join(project.dir, 'mcp-calls.log');
  variantFile = join(project.dir, 'mcp-variant.txt');
  const servers = { docs: stdioServerEntry({ MCP_FIXTURE_LOG: callLog, MCP_FIXTURE_VARIANT_FILE: variantFile }) };
  await writeFile(join(project.dir, 'flowing.mcp.json'), JSON.stringify({ servers }, null, 2));
  const pulled = await runCli(project.dir, ['mcp', 'pull']);
  expect(pulled, pulled.stderr).toMatchObject({ code: 0 });
  const generated = await runCli(project.dir, ['codegen', SPEC_FILE]);
  expect(generated.code, generated.stdout + generated.stderr).toBe(0);
}, 240_000);
afterAll(async () => {
  await project?.remove();
});

describe('MCP servers as Flowing tools', () => {
  it('flowing mcp pull snapshots each tool with its schemas and hints, sorted, and codegen writes a typed module from it', async () => {
    const snapshot = JSON.parse(await readFile(join(project.dir, 'mcp/docs.snapshot.json'), 'utf8'));
    expect(snapshot.server).toBe('docs');
    expect(snapshot.tools.map((t: { name: string }) => t.name)).toEqual(['crash', 'delete_page', 'fail_page', 'lookupPage', 'search_docs']);
    expect(snapshot.tools[1]).toMatchObject({ annotations: { destructiveHint: true }, inputSchema: { required: ['id'] } });
    const module = await readFile(join(project.dir, 'mcp/docs.tools.ts'), 'utf8');
    expect(module).toContain('input: z.object({ "query": z.string(), "limit": z.number().int().optional() })');
    expect(module).toContain('output: z.object({ "id": z.string(), "title": z.string(), "tags": z.array(z.string()) })');
    const registry = await readFile(join(project.dir, 'machines/docs-desk/docs-desk.registry.ts'), 'utf8');
    expect(registry).toContain('import { docsSearchDocs } from "../../mcp/docs.tools.js";');
  });

  it('maps the hints onto the contract: read-only is low risk and retried, destructive is high risk and never retried', async () => {
    const catalog = await loadToolCatalog(project.dir);
    expect(catalog.docs_search_docs).toMatchObject({ risk: 'low', idempotent: true, mcp: { server: 'docs', tool: 'search_docs' } });
    expect(catalog.docs_delete_page).toMatchObject({ risk: 'high', idempotent: false, requiredInputFields: ['id'] });
  });

  it("lists the servers' tools in the studio's tool picker with their schemas and risk", async () => {
    const studio = await startStudioServer({ rootDir: project.dir });
    try {
      const { tools } = (await (await fetch(`${studio.url}api/tools`)).json()) as { tools: Array<Record<string, any>> };
      expect(tools.find((t) => t.name === 'docs_delete_page')).toMatchObject({ risk: 'high', file: 'mcp/docs.tools.ts' });
      expect(tools.find((t) => t.name === 'docs_search_docs')?.inputSchema).toMatchObject({ required: ['query'] });
    } finally {
      await studio.close();
    }
  });

  it('refuses a destructive MCP tool that a state runs without an approval', async () => {
    const tools = await loadToolCatalog(project.dir);
    const unguarded = structuredClone(DOCS_DESK_SPEC) as any;
    unguarded.states.idle.on.DELETE = { target: 'delete', assign: { pageId: 'event.id' } };
    const result = parseSpecText(JSON.stringify(unguarded), { tools });
    expect(result.problems).toContainEqual(
      expect.objectContaining({ code: 'SPEC_RISKY_TOOL_NOT_APPROVED', path: '/states/idle/on/DELETE' }),
    );
  });

  it('checks input mappings against the server schema: an undeclared field at validation, a wrong type at the type check', async () => {
    const tools = await loadToolCatalog(project.dir);
    const unknownField = structuredClone(DOCS_DESK_SPEC) as any;
    unknownField.states.search.invoke.input = { query: 'context.query', querry: 'context.query' };
    expect(parseSpecText(JSON.stringify(unknownField), { tools }).problems).toContainEqual(
      expect.objectContaining({ code: 'SPEC_UNKNOWN_TOOL_INPUT', path: '/states/search/invoke/input/querry' }),
    );
    const codegen = createCodegen({ rootDir: project.dir });
    const before = await readFile(join(project.dir, SPEC_FILE), 'utf8');
    try {
      const wrongType = structuredClone(DOCS_DESK_SPEC) as any;
      wrongType.states.search.invoke.input = { query: 'context.query', limit: 'context.query' };
      await writeFile(join(project.dir, SPEC_FILE), JSON.stringify(wrongType, null, 2));
      const result = await codegen.generate(SPEC_FILE, { write: false });
      expect(result.ok).toBe(false);
      expect(result.problems.find((p) => p.code === 'CODEGEN_TYPE_ERROR')?.path).toBe('/states/search/invoke/input/limit');
    } finally {
      await writeFile(join(project.dir, SPEC_FILE), before);
      codegen.dispose();
    }
  }, 120_000);

  it('runs a session against the real server: search, structured lookup, and a destructive delete once, only after APPROVE', async () => {
    const { docsDesk } = await import(join(project.dir, 'machines/docs-desk/docs-desk.machine.ts'));
    const runtime = createRuntime({ machines: [docsDesk], store: createMemoryStore() });
    try {
      const session = await runtime.createSession(docsDesk);
      await session.send({ type: 'ASK', text: 'refunds' });
      await session.send({ type: 'LOOKUP', id: 'p7' });
      expect((await session.snapshot()).context).toMatchObject({ answer: '3 pages match "refunds"', title: 'Page p7', tags: ['guide'] });
      expect(await session.send({ type: 'DELETE', id: 'p9' })).toMatchObject({ applied: true, state: 'confirm_delete' });
      expect(await readFile(callLog, 'utf8').catch(() => '')).toBe('');
      expect(types(await session.events(), 'approval.requested')[0]).toMatchObject({ tool: 'docs_delete_page', args: { id: 'p9' } });
      expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: 'idle' });
      expect(await readFile(callLog, 'utf8')).toBe('delete p9\n');
      expect((await session.snapshot()).context).toMatchObject({ answer: 'deleted p9' });
    } finally {
      await closeMcpServers();
    }
  }, 60_000);

  it('fails an error result with MCP_TOOL_ERROR, a server dying mid-call with MCP_SERVER_CLOSED, and connects again for the next call', async () => {
    const { docsDesk } = await import(join(project.dir, 'machines/docs-desk/docs-desk.machine.ts'));
    const runtime = createRuntime({ machines: [docsDesk], store: createMemoryStore() });
    try {
      const session = await runtime.createSession(docsDesk);
      await session.send({ type: 'FAIL' });
      expect(((await session.snapshot()).context as Record<string, unknown>).error).toBe('MCP_TOOL_ERROR');
      await session.send({ type: 'CRASH' });
      expect(((await session.snapshot()).context as Record<string, unknown>).error).toBe('MCP_SERVER_CLOSED');
      const failed = types(await session.events(), 'tool.failed');
      expect(failed.at(-1)).toMatchObject({ tool: 'docs_crash', error: { code: 'MCP_SERVER_CLOSED' } });
      expect(failed.at(-2)).toMatchObject({
        tool: 'docs_fail_page',
        error: { code: 'MCP_TOOL_ERROR', message: 'docs/fail_page: page  is locked' },
      });
      await session.send({ type: 'ASK', text: 'after the crash' });
      expect(((await session.snapshot()).context as Record<string, unknown>).answer).toBe('3 pages match "after the crash"');
    } finally {
      await closeMcpServers();
    }
  }, 60_000);

  it('codegen --check reports a server whose tools changed as MCP_SCHEMA_DRIFT; --offline compares with the snapshot only', async () => {
    expect((await runCli(project.dir, ['codegen', '--check', SPEC_FILE])).code).toBe(0);
    await writeFile(variantFile, '2');
    try {
      const drifted = await runCli(project.dir, ['codegen', '--check', SPEC_FILE]);
      expect(drifted.code).toBe(1);
      expect(drifted.stdout).toContain(
        "mcp/docs.snapshot.json# MCP_SCHEMA_DRIFT MCP server 'docs' changed since its snapshot (search_docs changed)",
      );
      expect((await runCli(project.dir, ['codegen', '--check', '--offline', SPEC_FILE])).code).toBe(0);
    } finally {
      await writeFile(variantFile, '1');
    }
  }, 180_000);

  it('reaches a server over streamable HTTP with the same contract', async () => {
    const http = await startHttpDocsServer();
    const server = mcpServer('docs', { url: http.url });
    try {
      const snapshot = await snapshotServer(server);
      expect(snapshot.tools.map((t) => t.name)).toEqual(['crash', 'delete_page', 'fail_page', 'lookupPage', 'search_docs']);
      const lookup = mcpTool({
        server,
        tool: 'lookupPage',
        name: 'docs_lookup_page',
        description: 'One page by id.',
        input: z.object({ id: z.string() }),
        output: z.object({ id: z.string(), title: z.string(), tags: z.array(z.string()) }),
        annotations: { readOnlyHint: true },
      });
      const { docsDesk } = await import(join(project.dir, 'machines/docs-desk/docs-desk.machine.ts'));
      const runtime = createRuntime({
        machines: [docsDesk],
        store: createMemoryStore(),
        tools: { ...docsDesk.tools, docs_lookup_page: lookup },
      });
      const session = await runtime.createSession(docsDesk);
      await session.send({ type: 'LOOKUP', id: 'h1' });
      expect((await session.snapshot()).context).toMatchObject({ title: 'Page h1', tags: ['guide'] });
    } finally {
      await server.close();
      await http.close();
    }
  }, 60_000);
});
