/**
 * An id short enough for a list row that still tells ids apart: ids that differ only at the end (`s-watch-1`,
 * `s-watch-2`) or only at the start stay different, because both ends are kept and only the middle gives way.
 * Show the full id in a title next to it.
 * @example shortId('37996853-2cf6-4c6f-a024-371ab347c015') // '37996853…ab347c015'
 */
export function shortId(id: string, max = 18): string {
  const chars = [...id];
  if (chars.length <= max) return id;
  const tail = Math.ceil((max - 1) / 2);
  const head = max - 1 - tail;
  return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - tail).join('')}`;
}
