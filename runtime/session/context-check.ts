import type { z } from 'zod';
import type { FlowError } from '../errors.ts';

/**
 * Checks a session's context against the machine's context schema where it is written, once per distinct context
 * object (a step that changes nothing keeps the same object): no snapshot whose context breaks the spec is stored.
 */
export class ContextCheck {
  private valid: unknown;

  constructor(private readonly schema: z.ZodObject) {}

  /** CONTEXT_INVALID naming each issue, or undefined when the context matches. */
  check(context: unknown, step: number): FlowError | undefined {
    if (context === this.valid) return undefined;
    const result = this.schema.safeParse(context);
    if (result.success) {
      this.valid = context;
      return undefined;
    }
    const issues = result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
    const listed = issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return {
      code: 'CONTEXT_INVALID',
      message: `step ${step} produced a context that does not match the spec: ${listed}`,
      details: { issues },
    };
  }
}
