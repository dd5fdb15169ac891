import { propertyKey } from '../names.ts';

/**
 * Prints a JSON value as a TypeScript expression. Strings go through JSON.stringify (every character escaped
 * or valid in a string literal since ES2019), and `__proto__` keys become computed keys so that they create
 * own properties instead of setting the prototype.
 */
export function printLiteral(value: unknown, indent = '', step = '  '): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? (Object.is(value, -0) ? '0' : String(value)) : 'null';
  if (typeof value === 'boolean') return String(value);
  const inner = indent + step;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((v) => v === null || typeof v !== 'object')) {
      const flat = `[${value.map((v) => printLiteral(v)).join(', ')}]`;
      if (flat.length + indent.length <= 100) return flat;
    }
    return `[\n${value.map((v) => inner + printLiteral(v, inner, step)).join(',\n')},\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${inner}${propertyKey(k)}: ${printLiteral(v, inner, step)}`).join(',\n')},\n${indent}}`;
}
