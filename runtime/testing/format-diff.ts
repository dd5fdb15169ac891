import { stableJson } from '../session/approvals.ts';
import { shown, type CaseDiff } from './diff.ts';

const WIDTH = 58;

/**
 * A case diff as text a reviewer reads top to bottom: the first divergence, then old and new side by side for the
 * state path, tool calls with inputs, model calls, replies and final context, lined up (`!` changed, `-` only old,
 * `+` only new).
 */
export function formatCaseDiff(name: string, diff: CaseDiff): string[] {
  const lines = [`✗ ${name}: ${diff.first ?? 'differs'}`];
  if (diff.renamed)
    lines.push(
      `  the state path differs by state names only: ${Object.entries(diff.renamed)
        .map(([a, b]) => `${a} -> ${b}`)
        .join(', ')}`,
    );
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
  for (const m of diff.missing)
    lines.push(
      `  missing in the recording: ${m.call} ${m.name}${m.input === undefined ? '' : ` ${stableJson(m.input)}`} (REPLAY_MISSING_CALL, not made)`,
    );
  for (const u of diff.unused)
    lines.push(
      `  recorded but not asked for: ${u.call} ${u.name}${u.input === undefined ? '' : ` ${stableJson(u.input)}`} (REPLAY_UNUSED_CALL)`,
    );
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
  for (const [left, right] of align(a, b)) {
    const mark = left === right ? ' ' : left === undefined ? '+' : right === undefined ? '-' : '!';
    lines.push(`  ${mark} ${pad(left ?? '')} | ${right ?? ''}`);
  }
}

/**
 * Rows of old and new side by side, lined up on their longest common subsequence: a row only one side has stands
 * alone (`-` old only, `+` new only), and a changed row between equal ones pairs up (`!`).
 */
export function align(a: readonly string[], b: readonly string[]): Array<[string | undefined, string | undefined]> {
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const rows: Array<[string | undefined, string | undefined]> = [];
  let i = 0;
  let j = 0;
  const gapA: string[] = [];
  const gapB: string[] = [];
  const flush = () => {
    // A run of removed rows next to a run of added rows reads best as changed pairs.
    for (let k = 0; k < Math.max(gapA.length, gapB.length); k++) rows.push([gapA[k], gapB[k]]);
    gapA.length = 0;
    gapB.length = 0;
  };
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      flush();
      rows.push([a[i++], b[j++]]);
    } else if (j >= m || (i < n && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      gapA.push(a[i++]!);
    } else {
      gapB.push(b[j++]!);
    }
  }
  flush();
  return rows;
}

function pad(text: string): string {
  const cut = text.length > WIDTH ? `${text.slice(0, WIDTH - 1)}…` : text;
  return cut.padEnd(WIDTH);
}
