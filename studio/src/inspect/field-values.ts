import type { FieldMap, FieldType } from '@flowing/spec';

/** What a form holds for one field: text for text-like inputs, a boolean for checkboxes; nested maps for objects. */
export type RawValue = string | boolean | RawValues;
export interface RawValues {
  [field: string]: RawValue;
}

/** A field the form could not turn into a value, with the path that names it (`customer.tier`). */
export interface FieldProblem {
  path: string;
  message: string;
}

/** Whether a field is edited as JSON text (arrays, conversations, `unknown`). */
export function isJsonField(type: FieldType): boolean {
  return type.type === 'array' || type.type === 'unknown' || type.type === 'conversation';
}

/** The form's starting values: each field's `default` when it has one (context fields), else empty. */
export function initialValues(map: FieldMap | undefined): RawValues {
  const values: RawValues = {};
  for (const [name, type] of Object.entries(map ?? {})) {
    if (type.type === 'object' && type.fields) values[name] = initialValues(type.fields);
    else if (type.type === 'boolean') values[name] = type.default === true;
    else if (type.default !== undefined) values[name] = isJsonField(type) ? JSON.stringify(type.default) : String(type.default);
    else values[name] = '';
  }
  return values;
}

/**
 * Turns the form's values into the object sent to the runtime. An empty optional field is left out; an empty
 * required one, a number that is not a number, or JSON that does not parse is a problem naming its path. With
 * `partial` (the start input: the machine fills defaults), empty required fields are left out too.
 */
export function toValue(
  map: FieldMap | undefined,
  raw: RawValues,
  options: { partial?: boolean } = {},
  prefix = '',
): { value: Record<string, unknown>; problems: FieldProblem[] } {
  const value: Record<string, unknown> = {};
  const problems: FieldProblem[] = [];
  for (const [name, type] of Object.entries(map ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    const given = raw[name];
    if (type.type === 'object' && type.fields) {
      const nested = toValue(type.fields, typeof given === 'object' ? given : {}, options, path);
      const empty = Object.keys(nested.value).length === 0;
      if (!empty || (!type.optional && !options.partial)) value[name] = nested.value;
      if (!empty || !type.optional) problems.push(...nested.problems);
      continue;
    }
    if (type.type === 'boolean') {
      value[name] = given === true;
      continue;
    }
    const text = typeof given === 'string' ? given : '';
    if (text.trim() === '') {
      if (!type.optional && !options.partial && type.type !== 'string') problems.push({ path, message: 'is required' });
      else if (!type.optional && !options.partial) value[name] = '';
      continue;
    }
    if (type.type === 'number') {
      const number = Number(text);
      if (!Number.isFinite(number)) problems.push({ path, message: `${JSON.stringify(text)} is not a number` });
      else value[name] = number;
    } else if (type.type === 'enum') {
      if (type.values && !type.values.includes(text)) problems.push({ path, message: `must be one of ${type.values.join(', ')}` });
      else value[name] = text;
    } else if (isJsonField(type) || type.type === 'object') {
      try {
        value[name] = JSON.parse(text);
      } catch {
        problems.push({ path, message: 'is not valid JSON' });
      }
    } else value[name] = text;
  }
  return { value, problems };
}
