import type { FieldMap, FieldType } from '@flowing/spec';
import { propertyKey } from '../names.ts';
import { typeLiteral, type Doc, type Member } from './doc.ts';

/** The TypeScript type of one spec field type. */
export function fieldTypeDoc(type: FieldType): Doc {
  switch (type.type) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'unknown':
      return 'unknown';
    case 'conversation':
      return 'ConversationMessage[]';
    case 'enum':
      return type.values?.length ? { kind: 'union', members: type.values.map((v) => JSON.stringify(v)) } : 'never';
    case 'array': {
      const item = type.items ? fieldTypeDoc(type.items) : 'unknown';
      return typeof item === 'string' && /^[A-Za-z]+$/.test(item) ? `${item}[]` : { kind: 'seq', parts: ['Array<', item, '>'] };
    }
    case 'object':
      return type.fields ? fieldMapDoc(type.fields) : 'Record<string, unknown>';
  }
}

/** `{ a: string; b?: number }` for a field map; one line when it fits. */
export function fieldMapDoc(fields: FieldMap): Doc {
  return typeLiteral(fieldMembers(fields));
}

/** The members of a field map's type, each mapped to its spec pointer when `pointer` is given. */
export function fieldMembers(fields: FieldMap, pointer?: (field: string) => string): Member[] {
  return Object.entries(fields).map(([name, t]) => ({
    key: `${propertyKey(name)}${t.optional ? '?' : ''}`,
    value: fieldTypeDoc(t),
    pointer: pointer?.(name),
  }));
}
