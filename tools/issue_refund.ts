import { z } from 'zod';
import { defineTool } from '@flowing/runtime';

export const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Pays money back to the customer. Moves money: runs only after a person approves.',
  input: z.object({ order_id: z.string().min(1), amount: z.number().positive() }),
  output: z.object({ refund_id: z.string(), amount: z.number() }),
  timeoutMs: 10_000,
  idempotent: false,
  risk: 'high',
  errors: { REFUND_LIMIT: 'the amount is above the automatic refund limit' },
  examples: [{ input: { order_id: 'A1002', amount: 120 }, output: { refund_id: 'R-A1002-000001', amount: 120 } }],
  errorExamples: [
    { input: { order_id: 'A1002', amount: 5000 }, error: { code: 'REFUND_LIMIT', message: 'refunds above 1000 need a manager' } },
  ],
  async run({ order_id, amount }, { idempotencyKey }) {
    return { refund_id: `R-${order_id}-${idempotencyKey.slice(-6)}`, amount };
  },
});
