import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cliArgs } from '../helpers/cli.ts';
import { copyProject, REPO_DIR } from '../helpers/project.ts';

/** A machine that uses the fixture server's tools: a search, a structured lookup, a destructive delete behind approval. */
export const DOCS_DESK_SPEC = {
  specVersion: 1,
  id: 'docs-desk',
  context: {
    query: { type: 'string', default: '' },
    pageId: { type: 'string', default: '' },
    answer: { type: 'string', optional: true },
    title: { type: 'string', optional: true },
    tags: { type: 'array', items: { type: 'string' }, optional: true },
    error: { type: 'string', optional: true },
  },
  events: {
    ASK: { text: { type: 'string' } },
    LOOKUP: { id: { type: 'string' } },
    DELETE: { id: { type: 'string' } },
    APPROVE: {},
    REJECT: {},
    CRASH: {},
    FAIL: {},
  },
  initial: 'idle',
  states: {
    idle: {
      on: {
        ASK: { target: 'search', assign: { query: 'event.text' } },
        LOOKUP: { target: 'lookup', assign: { pageId: 'event.id' } },
        DELETE: { target: 'confirm_delete', assign: { pageId: 'event.id' } },
        CRASH: 'crash',
        FAIL: 'fail',
      },
    },
    search: {
      invoke: {
        tool: 'docs_search_docs',
        input: { query: 'context.query' },
        onDone: { target: 'idle', assign: { answer: 'output.text' } },
        onError: { target: 'idle', assign: { error: 'error.code' } },
      },
    },
    lookup: {
      invoke: {
        tool: 'docs_lookup_page',
        input: { id: 'context.pageId' },
        onDone: { target: 'idle', assign: { title: 'output.title', tags: 'output.tags' } },
        onError: { target: 'idle', assign: { error: 'error.code' } },
      },
    },
    confirm_delete: { tags: ['human'], on: { APPROVE: 'delete', REJECT: 'idle' } },
    delete: {
      invoke: {
        tool: 'docs_delete_page',
        input: { id: 'context.pageId' },
        onDone: { target: 'idle', assign: { answer: 'output.text' } },
        onError: { target: 'idle', assign: { error: 'error.code' } },
      },
    },
    crash: { invoke: { tool: 'docs_crash', onDone: 'idle', onError: { target: 'idle', assign: { error: 'error.code' } } } },
    fail: {
      invoke: {
        tool: 'docs_fail_page',
        input: { id: 'context.pageId' },
        onDone: 'idle',
        onError: { target: 'idle', assign: { error: 'error.code' } },
      },
    },
  },
};

/** The stdio entry of flowing.mcp.json that starts the fixture server with the repository's TypeScript loader. */
export function stdioServerEntry(env: Record<string, string>) {
  return {
    command: process.execPath,
    args: ['--import', import.meta.resolve('tsx'), join(REPO_DIR, 'test/helpers/mcp-server.ts')],
    env,
  };
}

/** A project copy with flowing.mcp.json and the docs-desk spec. */
export async function mcpProject(servers: Record<string, unknown>) {
  const project = await copyProject('flowing-mcp-');
  await writeFile(join(project.dir, 'flowing.mcp.json'), JSON.stringify({ servers }, null, 2));
  await mkdir(join(project.dir, 'machines/docs-desk'), { recursive: true });
  await writeFile(join(project.dir, 'machines/docs-desk/docs-desk.flow.json'), JSON.stringify(DOCS_DESK_SPEC, null, 2));
  return project;
}

/** Runs the real CLI from the sources in `cwd` (killed after 60 s). */
export function runCli(cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(...args), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
