/**
 * Names among `candidates` within a small edit distance of `name`, nearest first (at most `limit`). A typo'd
 * machine id is one or two edits away; anything further is not a suggestion. Hand-written: a dependency for one
 * loop over a handful of names costs more than it saves.
 */
export function nearestNames(name: string, candidates: Iterable<string>, limit = 3): string[] {
  const threshold = Math.max(2, Math.floor(name.length / 3));
  const scored: Array<{ candidate: string; distance: number }> = [];
  for (const candidate of new Set(candidates)) {
    const distance = editDistance(name, candidate);
    if (distance <= threshold) scored.push({ candidate, distance });
  }
  scored.sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate));
  return scored.slice(0, limit).map((s) => s.candidate);
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours cost 1. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
