import type { FieldMap, FieldType } from '@flowing/spec';
import type { LlmRequestBase } from './types.ts';

type Rules = NonNullable<LlmRequestBase['scripted']>;

/**
 * Fills a field map from text the way the scripted provider does, for every field type and deterministically:
 * - a `patterns` entry (keyed by the field's dotted path, e.g. `address.city`) fills the field from its first capture
 *   group (or whole match); an array field takes every match, each read as its item type;
 * - an enum field takes the first of its values whose `keywords` (default: the value, `_` read as a space) occur in
 *   the text;
 * - a required field nothing filled gets a default: '' / 0 / false / the enum's last value / [] / its object filled the
 *   same way / null; an optional one is left out (an optional object is kept when a rule filled a field inside it).
 * @example fillFields({ tags: { type: 'array', items: { type: 'string' } } }, 'A1 B2', { patterns: { tags: '[A-Z][0-9]' } }) // { tags: ['A1', 'B2'] }
 */
export function fillFields(fields: FieldMap, text: string, rules: Rules | undefined): Record<string, unknown> {
  return fillMap(fields, text, rules ?? {}, '').value;
}

function fillMap(fields: FieldMap, text: string, rules: Rules, prefix: string): { value: Record<string, unknown>; matched: boolean } {
  const value: Record<string, unknown> = {};
  let matched = false;
  for (const [name, type] of Object.entries(fields)) {
    const filled = fillField(type, text, rules, `${prefix}${name}`);
    if (filled.matched) matched = true;
    if (filled.matched || !type.optional) value[name] = filled.value;
    else if (type.type === 'object' && filled.inner) value[name] = filled.value;
  }
  return { value, matched };
}

function fillField(type: FieldType, text: string, rules: Rules, path: string): { value: unknown; matched: boolean; inner?: boolean } {
  const source = rules.patterns?.[path];
  if (type.type === 'array') {
    if (source) {
      const items = [...text.matchAll(new RegExp(source, 'gi'))].map((m) => readMatch(type.items, m[1] ?? m[0]));
      if (items.length > 0) return { value: items, matched: true };
    }
    return { value: [], matched: false };
  }
  if (type.type === 'object') {
    const inner = fillMap(type.fields ?? {}, text, rules, `${path}.`);
    return { value: inner.value, matched: false, inner: inner.matched };
  }
  if (source) {
    const match = new RegExp(source, 'i').exec(text);
    const value = match ? readMatch(type, match[1] ?? match[0]) : undefined;
    if (value !== undefined) return { value, matched: true };
  }
  if (type.type === 'enum') {
    const values = type.values ?? [];
    const lower = text.toLowerCase();
    const hit = values.find((v) =>
      (rules.keywords?.[v] ?? [v.replace(/_/g, ' ')]).some((w) => w !== '' && lower.includes(w.toLowerCase())),
    );
    if (hit !== undefined) return { value: hit, matched: true };
    return { value: values[values.length - 1], matched: false };
  }
  return { value: defaultOf(type), matched: false };
}

/** A matched piece of text as a value of the field's type; undefined when it is not one (an enum value not listed). */
export function readMatch(type: FieldType | undefined, raw: string): unknown {
  switch (type?.type) {
    case 'number':
      return Number(raw);
    case 'boolean':
      return /^(true|yes)$/i.test(raw);
    case 'enum':
      return type.values?.find((v) => v.toLowerCase() === raw.toLowerCase());
    default:
      return raw;
  }
}

function defaultOf(type: FieldType): unknown {
  switch (type.type) {
    case 'string':
      return '';
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}
