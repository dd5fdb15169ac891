/**
 * A JSON Schema (as MCP servers describe tool inputs and outputs) as zod source text, so a generated module carries
 * real TypeScript types for a server's tools and codegen can type-check input mappings against them. Covers what tool
 * schemas use — objects, arrays, strings, numbers, booleans, null, enums, constants, unions; anything else becomes
 * `z.unknown()`, which accepts every value (the server still validates).
 */
export function zodSource(schema: unknown, depth = 0): string {
  if (depth > 32 || !isRecord(schema)) return 'z.unknown()';
  const described = (source: string) =>
    typeof schema.description === 'string' ? `${source}.describe(${JSON.stringify(schema.description)})` : source;
  if (Array.isArray(schema.enum)) {
    const values = schema.enum;
    if (values.length > 0 && values.every((v) => typeof v === 'string')) return described(`z.enum(${JSON.stringify(values)})`);
    if (values.length > 0) return described(union(values.map((v) => `z.literal(${JSON.stringify(v)})`)));
  }
  if ('const' in schema) return described(`z.literal(${JSON.stringify(schema.const)})`);
  const alternatives = (Array.isArray(schema.anyOf) && schema.anyOf) || (Array.isArray(schema.oneOf) && schema.oneOf);
  if (alternatives) return described(union(alternatives.map((s) => zodSource(s, depth + 1))));
  const type = schema.type;
  if (Array.isArray(type)) return described(union(type.map((t) => zodSource({ ...schema, type: t, description: undefined }, depth + 1))));
  switch (type) {
    case 'string':
      return described('z.string()');
    case 'integer':
      return described('z.number().int()');
    case 'number':
      return described('z.number()');
    case 'boolean':
      return described('z.boolean()');
    case 'null':
      return described('z.null()');
    case 'array':
      return described(`z.array(${zodSource(schema.items, depth + 1)})`);
    case 'object':
      return described(objectSource(schema, depth));
    default:
      return isRecord(schema.properties) ? described(objectSource(schema, depth)) : described('z.unknown()');
  }
}

function objectSource(schema: Record<string, unknown>, depth: number): string {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((k) => typeof k === 'string') : []);
  const fields = Object.entries(properties).map(([key, value]) => {
    const field = zodSource(value, depth + 1);
    return `${JSON.stringify(key)}: ${required.has(key) ? field : `${field}.optional()`}`;
  });
  // A plain object: fields the schema does not list are dropped, and a mapping naming one is a type error.
  return fields.length === 0 ? 'z.object({})' : `z.object({ ${fields.join(', ')} })`;
}

function union(members: string[]): string {
  if (members.length === 0) return 'z.never()';
  return members.length === 1 ? members[0]! : `z.union([${members.join(', ')}])`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
