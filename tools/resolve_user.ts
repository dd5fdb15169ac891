import { z } from 'zod';
import { defineTool, ToolError } from '@flowing/runtime';
import { DEMO_CUSTOMERS } from './fixtures.ts';

export const resolveUser = defineTool({
  name: 'resolve_user',
  description: 'Finds the customer record for a signed-in user id.',
  input: z.object({ user_id: z.string().min(1) }),
  output: z.object({ id: z.string(), name: z.string(), tier: z.enum(['standard', 'gold']) }),
  timeoutMs: 2_000,
  idempotent: true,
  errors: { USER_NOT_FOUND: 'no customer for this user id' },
  examples: [{ input: { user_id: 'guest' }, output: { id: 'c-100', name: 'Guest', tier: 'standard' } }],
  errorExamples: [{ input: { user_id: 'nobody' }, error: { code: 'USER_NOT_FOUND', message: 'no customer for user nobody' } }],
  async run({ user_id }) {
    const customer = DEMO_CUSTOMERS[user_id];
    if (!customer) throw new ToolError('USER_NOT_FOUND', `no customer for user ${user_id}`);
    return customer;
  },
});
