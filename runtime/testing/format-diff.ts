import { stableJson } from '../session/approvals.ts';
import { shown, type CaseDiff } from './diff.ts';

const WIDTH = 58;

/**
 * A case diff as text a reviewer reads top to bottom: the first divergence, then old and new side by side for the
 * state path, tool calls with inputs, model calls, replies and final context; `!` marks rows that differ.
 */
export function formatCaseDiff(name: string, diff: CaseDiff): string[] {
  const lines = [`✗ ${name}: ${diff.first ?? 'differs'}`];
  if (diff.renamed) lines.push(`  the state path differs by state names only: ${Object.entries(diff.renamed).map(([a, b]) => `${a} -> ${b}`).join(', ')}`);
  section(lines, 'state path', diff.states.old, diff.states.new, (s) => s);
  section(lines, 'tool calls', diff.toolCalls.old, diff.toolCalls.new, (c) => `${c.tool} ${stableJson(c.input)}`);
  section(lines, 'model calls', diff.modelCalls.old, diff.modelCalls.new, (c) => `${c.model} -> ${stableJson(c.output)}`);
  section(lines, 'replies', diff.replies.old, diff.replies.new, (r) => JSON.stringify(r));
  lines.push(`  status: ${diff.status.old}${diff.status.old === diff.status.new ? ' (same)' : `  ->  ${diff.status.new}`}`);
  if (diff.context.length > 0) {
    lines.push('  final context (keys that differ):');
    for (const c of diff.context) lines.push(`  ! ${pad(`${c.key} = ${shown(c.old)}`)} | ${c.key} = ${shown(c.new)}`);
  } else {
    lines.push('  final context: same');
  }
  for (const m of diff.missing) lines.push(`  missing in the recording: ${m.call} ${m.name}${m.input === undefined ? '' : ` ${stableJson(m.input)}`} (REPLAY_MISSING_CALL, not made)`);
  for (const u of diff.unused) lines.push(`  recorded but not asked for: ${u.call} ${u.name}${u.input === undefined ? '' : ` ${stableJson(u.input)}`} (REPLAY_UNUSED_CALL)`);
  return lines;
}

function section<T>(lines: string[], title: string, old: T[], now: T[], show: (value: T) => string) {
  const a = old.map(show);
  const b = now.map(show);
  if (stableJson(a) === stableJson(b)) {
    lines.push(`  ${title}: same (${a.length})`);
    return;
  }
  lines.push(`  ${title}:`);
  lines.push(`    ${pad('old (recorded)')} | new (this machine)`);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const mark = a[i] === b[i] ? ' ' : '!';
    lines.push(`  ${mark} ${pad(a[i] ?? '')} | ${b[i] ?? ''}`);
  }
}

function pad(text: string): string {
  const cut = text.length > WIDTH ? `${text.slice(0, WIDTH - 1)}…` : text;
  return cut.padEnd(WIDTH);
}
