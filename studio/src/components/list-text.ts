/** Splits a comma-separated list, dropping empty entries. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * The text a list field shows: what the person is typing while it still reads as the stored list (so a trailing
 * comma or space survives until the next name is typed), else the stored list, e.g. after an undo.
 * @example listText('a, ', ['a']) // 'a, '
 */
export function listText(draft: string | undefined, list: readonly string[]): string {
  if (draft !== undefined) {
    const typed = splitList(draft);
    if (typed.length === list.length && typed.every((item, i) => item === list[i])) return draft;
  }
  return list.join(', ');
}
