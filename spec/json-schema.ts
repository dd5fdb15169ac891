import { z } from 'zod';
import { FlowSpecSchema } from './schema.ts';

/** The JSON Schema of FlowSpec v1, for editors (referenced by `$schema` in each spec). */
export function flowSpecJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(FlowSpecSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
