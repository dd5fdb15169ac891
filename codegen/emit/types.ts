import type { FieldMap, FieldType } from '@flowing/spec';
import { propertyKey } from '../names.ts';

/** The TypeScript type of one spec field type. */
export function fieldTypeSource(type: FieldType): string {
  switch (type.type) {
    case 'string': return 'string';
    case 'number': return 'number';
    case 'boolean': return 'boolean';
    case 'unknown': return 'unknown';
    case 'enum': return (type.values ?? []).map((v) => JSON.stringify(v)).join(' | ') || 'never';
    case 'array': {
      const item = type.items ? fieldTypeSource(type.items) : 'unknown';
      return /^[A-Za-z]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object': return type.fields ? objectTypeSource(type.fields) : 'Record<string, unknown>';
  }
}

/** `{ a: string; b?: number }` for a field map, on one line. */
export function objectTypeSource(fields: FieldMap, optionalAll = false): string {
  const members = Object.entries(fields).map(([name, t]) => `${propertyKey(name)}${t.optional || optionalAll ? '?' : ''}: ${fieldTypeSource(t)}`);
  return members.length === 0 ? '{}' : `{ ${members.join('; ')} }`;
}
