import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { escapeControlCharacters, formatProblemLine } from '@flowing/spec';
import { loadMcpProject, MCP_CONFIG_FILE, snapshotFile, writeFileAtomic, type McpProjectServer } from '@flowing/codegen';
import { pullSnapshot, snapshotText } from './servers.ts';

const EXIT_OK = 0;
const EXIT_PROBLEMS = 1;
const EXIT_USAGE = 2;

/** `flowing mcp pull [servers...]`: lists each server's tools and writes mcp/<server>.snapshot.json. */
export async function mcpPullCommand(names: string[], rootDir = process.cwd()): Promise<number> {
  const servers = await selectServers(names, rootDir);
  if (typeof servers === 'number') return servers;
  let failed = false;
  for (const server of servers) {
    const file = snapshotFile(server.name);
    try {
      const text = snapshotText(await pullSnapshot(server, rootDir));
      const before = await readFile(join(rootDir, file), 'utf8').catch(() => undefined);
      if (before !== text) await writeFileAtomic(join(rootDir, file), text);
      const count = (JSON.parse(text) as { tools: unknown[] }).tools.length;
      process.stdout.write(`${file}: ${before === text ? 'up to date' : 'wrote'} (${count} tools)\n`);
    } catch (error) {
      failed = true;
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(formatProblemLine(file, { code: codeOf(error), severity: 'error', path: '', message }) + '\n');
    }
  }
  if (!failed && servers.length > 0) process.stdout.write('run `flowing codegen` to regenerate the tools modules\n');
  return failed ? EXIT_PROBLEMS : EXIT_OK;
}

/**
 * `flowing codegen --check`, live part: each server's tools against its snapshot. A difference is `MCP_SCHEMA_DRIFT`
 * naming the tools; a server that cannot be reached fails the check too (`--offline` skips this part).
 */
export async function mcpDriftLines(rootDir = process.cwd()): Promise<string[]> {
  const project = await loadMcpProject(rootDir);
  const lines: string[] = [];
  for (const server of project.servers) {
    const file = snapshotFile(server.name);
    if (!server.snapshot) continue; // reported by codegen itself
    try {
      const live = await pullSnapshot(server, rootDir);
      const changed = changedTools(server, live);
      if (changed.length > 0) {
        const message = `MCP server '${server.name}' changed since its snapshot (${changed.join(', ')}); run \`flowing mcp pull\`, then \`flowing codegen\``;
        lines.push(formatProblemLine(file, { code: 'MCP_SCHEMA_DRIFT', severity: 'error', path: '', message }));
      }
    } catch (error) {
      const message = `${error instanceof Error ? error.message : String(error)} (pass --offline to check against the snapshots only)`;
      lines.push(formatProblemLine(file, { code: codeOf(error), severity: 'error', path: '', message }));
    }
  }
  return lines;
}

function changedTools(server: McpProjectServer, live: { tools: Array<{ name: string }> }): string[] {
  const before = new Map(server.snapshot!.tools.map((tool) => [tool.name, JSON.stringify(tool)]));
  const after = new Map(live.tools.map((tool) => [tool.name, JSON.stringify(tool)]));
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  return names.flatMap((name) => {
    if (!after.has(name)) return [`${name} removed`];
    if (!before.has(name)) return [`${name} added`];
    return before.get(name) === after.get(name) ? [] : [`${name} changed`];
  });
}

async function selectServers(names: string[], rootDir: string): Promise<McpProjectServer[] | number> {
  const project = await loadMcpProject(rootDir);
  const configProblem = project.problems.find((p) => p.file === MCP_CONFIG_FILE);
  if (configProblem) {
    process.stderr.write(
      formatProblemLine(MCP_CONFIG_FILE, { code: 'MCP_CONFIG_INVALID', severity: 'error', path: '', message: configProblem.message }) +
        '\n',
    );
    return EXIT_PROBLEMS;
  }
  if (project.servers.length === 0) {
    process.stderr.write(`flowing mcp: no servers declared (add them to ${MCP_CONFIG_FILE})\n`);
    return EXIT_USAGE;
  }
  const unknown = names.filter((name) => !project.servers.some((s) => s.name === name));
  if (unknown.length > 0) {
    const known = project.servers.map((s) => s.name).join(', ');
    process.stderr.write(`flowing mcp: unknown server ${escapeControlCharacters(unknown.join(', '))} (declared: ${known})\n`);
    return EXIT_USAGE;
  }
  return names.length === 0 ? project.servers : project.servers.filter((s) => names.includes(s.name));
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) ? code : 'MCP_UNAVAILABLE';
}
