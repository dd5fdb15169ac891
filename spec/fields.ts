import { z } from 'zod';
import { ConversationSchema } from './conversation.ts';
import type { FieldMap, FieldType, FlowSpec } from './schema.ts';

/** The zod schema of one field type. */
export function fieldTypeToZod(type: FieldType): z.ZodType {
  let schema: z.ZodType;
  switch (type.type) {
    case 'string':
      schema = z.string();
      break;
    case 'number':
      schema = z.number();
      break;
    case 'boolean':
      schema = z.boolean();
      break;
    case 'enum':
      schema = z.enum((type.values ?? []) as [string, ...string[]]);
      break;
    case 'array':
      schema = z.array(type.items ? fieldTypeToZod(type.items) : z.unknown());
      break;
    case 'object':
      schema = type.fields ? buildFieldMap(type.fields) : z.record(z.string(), z.unknown());
      break;
    case 'unknown':
      schema = z.unknown();
      break;
    case 'conversation':
      schema = ConversationSchema;
      break;
  }
  return type.optional ? schema.optional() : schema;
}

/** Schemas built from field maps, keyed by the map's JSON; bounded, oldest entry dropped first. */
const fieldMapSchemas = new Map<string, z.ZodObject>();
const FIELD_MAP_CACHE_SIZE = 256;

/**
 * A strict zod object for a field map (unknown keys are refused, so `__proto__` payload keys never slip in).
 * Building a schema costs far more than using one (model requests carry their field map on every call), so equal
 * maps share one schema; zod schemas are immutable, so sharing is safe.
 */
export function fieldMapToZod(map: FieldMap): z.ZodObject {
  const key = JSON.stringify(map);
  let schema = fieldMapSchemas.get(key);
  if (!schema) {
    schema = buildFieldMap(map);
    if (fieldMapSchemas.size >= FIELD_MAP_CACHE_SIZE) fieldMapSchemas.delete(fieldMapSchemas.keys().next().value!);
    fieldMapSchemas.set(key, schema);
  }
  return schema;
}

function buildFieldMap(map: FieldMap): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, type] of Object.entries(map)) shape[name] = fieldTypeToZod(type);
  return z.strictObject(shape);
}

/** Payload schemas of every declared event, keyed by event name (the `type` key is accepted and ignored). */
export function eventPayloadSchemas(spec: Pick<FlowSpec, 'events'>): Map<string, z.ZodObject> {
  const out = new Map<string, z.ZodObject>();
  for (const [event, payload] of Object.entries(spec.events)) {
    out.set(event, fieldMapToZod(payload).extend({ type: z.literal(event) }));
  }
  return out;
}

/** The schema of the machine's context: declared fields, with `optional` fields and defaults as written. */
export function contextSchema(spec: Pick<FlowSpec, 'context'>): z.ZodObject {
  return fieldMapToZod(spec.context);
}

/** A context field's initial value: its declared `default`, else `[]` for a conversation, else undefined. */
export function fieldDefault(type: FieldType): unknown {
  if (type.default !== undefined) return type.default;
  return type.type === 'conversation' ? [] : undefined;
}

/** Whether a context field must be given at start: neither optional nor with a default (a conversation starts empty). */
export function isRequiredInput(type: FieldType): boolean {
  return !type.optional && fieldDefault(type) === undefined;
}

/** Initial context from the declared defaults. */
export function defaultContext(spec: Pick<FlowSpec, 'context'>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(spec.context)) {
    const value = fieldDefault(type);
    if (value !== undefined) out[name] = structuredClone(value);
  }
  return out;
}
