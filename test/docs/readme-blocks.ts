import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_DIR } from '../helpers/project.ts';

/** One fenced code block of the README. */
export interface ReadmeBlock {
  /** The `##` or `###` heading it sits under. */
  section: string;
  /** The fence's info string (`sh`, `ts`, `json` ... or '' for sample output). */
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** Why it is not run or checked, from a `<!-- doc-test: skip (reason) -->` line right above it. */
  skip?: string;
}

/** The first heading of the user-facing part, and the heading that ends it (contributors' commands follow). */
export const USER_FACING = { from: '## Use it in your own project', to: '## Development' } as const;
const SKIP_MARKER = /^<!-- doc-test: skip \((.+)\) -->$/;

/** Every fenced block between USER_FACING.from and USER_FACING.to, in order. */
export async function readmeBlocks(text?: string): Promise<ReadmeBlock[]> {
  const lines = (text ?? (await readFile(join(REPO_DIR, 'README.md'), 'utf8'))).split('\n');
  const blocks: ReadmeBlock[] = [];
  let inside = false;
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === USER_FACING.from) inside = true;
    else if (line === USER_FACING.to) break;
    if (!inside) continue;
    if (/^#{2,3} /.test(line)) section = line.replace(/^#+ /, '');
    const fence = /^```(\S*)\s*$/.exec(line);
    if (!fence) continue;
    const end = lines.findIndex((candidate, j) => j > i && candidate === '```');
    if (end < 0) throw new Error(`README.md:${i + 1}: a code block is never closed`);
    const skip = SKIP_MARKER.exec(lines[i - 1] ?? '')?.[1];
    blocks.push({ section, lang: fence[1]!, text: lines.slice(i + 1, end).join('\n'), line: i + 1, ...(skip ? { skip } : {}) });
    i = end;
  }
  return blocks;
}

/**
 * The commands of a shell block, one a line (a comment after a command stays: bash ignores it), a here-document
 * kept whole with its lines up to its delimiter.
 */
export function shellCommands(block: string): string[] {
  const lines = block.split('\n');
  const commands: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const heredoc = /<<-?\s*'?([A-Za-z_]+)'?/.exec(line)?.[1];
    if (heredoc) {
      const end = lines.findIndex((candidate, j) => j > i && candidate.trim() === heredoc);
      if (end < 0) throw new Error(`a here-document (${heredoc}) is never closed: ${line}`);
      commands.push(lines.slice(i, end + 1).join('\n'));
      i = end;
    } else {
      commands.push(line);
    }
  }
  return commands;
}

/** Where a TypeScript block lives in the project: the file its first line names (`// src/service.ts`), if any. */
export function snippetFile(block: string): string | undefined {
  return /^\/\/ ((?:[\w.-]+\/)*[\w.-]+\.ts)$/.exec(block.split('\n')[0] ?? '')?.[1];
}
