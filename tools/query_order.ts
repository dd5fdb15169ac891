import { z } from 'zod';
import { defineTool, ToolError } from '@flowing/runtime';
import { DEMO_ORDERS } from './fixtures.ts';

export const queryOrder = defineTool({
  name: 'query_order',
  description: 'Looks up an order by id for a customer.',
  input: z.object({ order_id: z.string().min(1), customer_id: z.string() }),
  output: z.object({
    order_id: z.string(),
    status: z.enum(['processing', 'shipped', 'delivered']),
    total: z.number(),
    tracking_number: z.string().optional(),
  }),
  timeoutMs: 3_000,
  idempotent: true,
  errors: { ORDER_NOT_FOUND: 'no order with this id' },
  examples: [
    {
      input: { order_id: 'A1001', customer_id: 'c-100' },
      output: { order_id: 'A1001', status: 'shipped', total: 59.9, tracking_number: 'TRK-88231' },
    },
    { input: { order_id: 'A1002', customer_id: 'c-100' }, output: { order_id: 'A1002', status: 'processing', total: 120 } },
  ],
  errorExamples: [
    { input: { order_id: 'Z9999', customer_id: 'c-100' }, error: { code: 'ORDER_NOT_FOUND', message: 'no order Z9999' } },
    { input: { order_id: 'A1001', customer_id: 'c-100' }, error: { code: 'TOOL_TIMEOUT', message: 'the order service did not answer' } },
  ],
  async run({ order_id }) {
    const order = DEMO_ORDERS[order_id.toUpperCase()];
    if (!order) throw new ToolError('ORDER_NOT_FOUND', `no order ${order_id}`);
    return order;
  },
});
