/** JSON pointer helpers (RFC 6901) for reading and editing a spec document by path. */

/** Splits a JSON pointer into its unescaped segments. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Joins segments into a JSON pointer. */
export function toPointer(segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** Reads the value at a pointer, or undefined when any step is missing. */
export function getAt(root: unknown, pointer: string | readonly string[]): unknown {
  const segments = typeof pointer === 'string' ? parsePointer(pointer) : pointer;
  let cursor: unknown = root;
  for (const segment of segments) {
    if (cursor === null || typeof cursor !== 'object') return undefined;
    if (!Object.hasOwn(cursor, segment)) return undefined;
    cursor = (cursor as Record<string, unknown>)[segment];
  }
  return cursor;
}

/**
 * Returns a copy of `root` with the value at `pointer` replaced (or removed when `value` is undefined).
 * Objects on the way are copied, untouched branches are shared; missing objects are created.
 */
export function setAt<T>(root: T, pointer: string | readonly string[], value: unknown): T {
  const segments = typeof pointer === 'string' ? parsePointer(pointer) : pointer;
  return setSegments(root, segments, 0, value) as T;
}

function setSegments(node: unknown, segments: readonly string[], index: number, value: unknown): unknown {
  if (index === segments.length) return value;
  const key = segments[index]!;
  if (Array.isArray(node)) {
    const copy = node.slice();
    const i = Number(key);
    const child = setSegments(copy[i], segments, index + 1, value);
    if (child === undefined && index === segments.length - 1) copy.splice(i, 1);
    else copy[i] = child;
    return copy;
  }
  const object = node && typeof node === 'object' ? (node as Record<string, unknown>) : {};
  const child = setSegments(object[key], segments, index + 1, value);
  const copy: Record<string, unknown> = {};
  let placed = false;
  for (const [k, v] of Object.entries(object)) {
    if (k === key) {
      placed = true;
      if (child !== undefined) copy[k] = child;
    } else copy[k] = v;
  }
  if (!placed && child !== undefined) copy[key] = child;
  return copy;
}

/** Returns a copy of an object with one key renamed, keeping the key order. */
export function renameKey<T>(object: Record<string, T>, from: string, to: string): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(object)) out[k === from ? to : k] = v;
  return out;
}

/** True when `pointer` equals `prefix` or lies below it. */
export function isWithin(pointer: string, prefix: string): boolean {
  return pointer === prefix || pointer.startsWith(prefix + '/');
}
