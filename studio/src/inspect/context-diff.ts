/** One changed context path: the value before and after an event (`undefined`: absent). */
export interface ContextChange {
  path: string;
  before: unknown;
  after: unknown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The paths where two contexts differ, depth first in key order; nested objects are compared field by field, arrays
 * and other values as a whole (by their JSON).
 * @example diffContext({ a: 1, o: { x: 1 } }, { a: 1, o: { x: 2 } }) // [{ path: 'o.x', before: 1, after: 2 }]
 */
export function diffContext(before: unknown, after: unknown, prefix = ''): ContextChange[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => diffContext(before[key], after[key], prefix ? `${prefix}.${key}` : key));
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [{ path: prefix || '(context)', before, after }];
}
