/**
 * React keys for the items of a list that have no id of their own: each item's text, with `#2`, `#3`… on a repeat. An
 * item keeps its key when others are added or removed before it (an index would not), so React keeps its element.
 */
export function keyedByText<T>(items: readonly T[], text: (item: T) => string): Array<{ key: string; item: T }> {
  const seen = new Map<string, number>();
  return items.map((item) => {
    const base = text(item);
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return { key: count === 1 ? base : `${base}#${count}`, item };
  });
}
