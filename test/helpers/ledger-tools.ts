/**
 * order-support's side-effecting tools, rewired to call the ledger service (ledger-service.ts) over HTTP: the lookup
 * is idempotent (the runtime may repeat it with the same key), the refund is not and is high-risk (runs only after an
 * approval). The ledger's URL comes from LEDGER_URL in the environment of the process that runs them.
 */
import { z } from 'zod';
import { defineTool, ToolError } from '@flowing/runtime';
import { DEMO_ORDERS } from '../../tools/fixtures.ts';

async function callLedger(tool: string, args: unknown, idempotencyKey: string, signal: AbortSignal): Promise<{ requestId: number }> {
  const url = process.env.LEDGER_URL;
  if (!url) throw new ToolError('LEDGER_NOT_CONFIGURED', 'LEDGER_URL is not set');
  const response = await fetch(`${url}/call/${tool}`, {
    method: 'POST',
    signal,
    body: JSON.stringify({ args }),
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
  });
  if (!response.ok) throw new ToolError('LEDGER_REFUSED', `the ledger answered ${response.status}`);
  return (await response.json()) as { requestId: number };
}

export const queryOrder = defineTool({
  name: 'query_order',
  description: 'Looks up an order by id for a customer (through the ledger service).',
  input: z.object({ order_id: z.string().min(1), customer_id: z.string() }),
  output: z.object({
    order_id: z.string(),
    status: z.enum(['processing', 'shipped', 'delivered']),
    total: z.number(),
    tracking_number: z.string().optional(),
  }),
  timeoutMs: 10_000,
  idempotent: true,
  errors: { ORDER_NOT_FOUND: 'no order with this id' },
  async run(args, { idempotencyKey, signal }) {
    await callLedger('query_order', args, idempotencyKey, signal);
    const order = DEMO_ORDERS[args.order_id.toUpperCase()];
    if (!order) throw new ToolError('ORDER_NOT_FOUND', `no order ${args.order_id}`);
    return order;
  },
});

export const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Pays money back to the customer (through the ledger service). Runs only after a person approves.',
  input: z.object({ order_id: z.string().min(1), amount: z.number().positive() }),
  output: z.object({ refund_id: z.string(), amount: z.number() }),
  timeoutMs: 10_000,
  idempotent: false,
  risk: 'high',
  async run(args, { idempotencyKey, signal }) {
    const { requestId } = await callLedger('issue_refund', args, idempotencyKey, signal);
    return { refund_id: `R-${requestId}`, amount: args.amount };
  },
});
