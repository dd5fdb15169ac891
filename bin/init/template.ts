/** The example `flowing init` adds: one small machine and the tool it calls. */
export const EXAMPLE_MACHINE_ID = 'order-lookup';
export const EXAMPLE_TOOL_NAME = 'get_order_status';

export const EXAMPLE_SPEC = {
  $schema: '../flow.schema.json',
  specVersion: 1,
  id: EXAMPLE_MACHINE_ID,
  description: 'Looks up the status of an order when asked, and keeps the answer.',
  context: {
    orderId: { type: 'string', optional: true },
    status: { type: 'string', optional: true },
    problem: { type: 'string', optional: true },
  },
  events: {
    ASK: { orderId: { type: 'string' } },
    CLOSE: {},
  },
  initial: 'idle',
  states: {
    idle: {
      on: {
        ASK: { target: 'looking_up', assign: { orderId: 'event.orderId' } },
        CLOSE: 'closed',
      },
    },
    looking_up: {
      invoke: {
        tool: EXAMPLE_TOOL_NAME,
        input: { order_id: "context.orderId ?? ''" },
        onDone: { target: 'answered', assign: { status: 'output.status' } },
        onError: [
          { guard: "error.code == 'ORDER_NOT_FOUND'", target: 'idle', assign: { problem: "'no such order'" } },
          { target: 'idle', assign: { problem: 'error.message' } },
        ],
      },
    },
    answered: {
      on: {
        ASK: { target: 'looking_up', assign: { orderId: 'event.orderId' } },
        CLOSE: 'closed',
      },
    },
    closed: { type: 'final' },
  },
};

export const EXAMPLE_TOOL = `import { z } from 'zod';
import { defineTool, ToolError } from '@flowing/runtime';

const ORDERS: Record<string, 'processing' | 'shipped' | 'delivered'> = { A1: 'shipped', A2: 'delivered' };

export const getOrderStatus = defineTool({
  name: '${EXAMPLE_TOOL_NAME}',
  description: 'Reads the status of an order. Replace the table with a call to your order service.',
  input: z.object({ order_id: z.string().min(1) }),
  output: z.object({ order_id: z.string(), status: z.enum(['processing', 'shipped', 'delivered']) }),
  timeoutMs: 2_000,
  idempotent: true,
  errors: { ORDER_NOT_FOUND: 'no order with this id' },
  // What \`flowing test\` answers this tool's calls with on its generated paths (checked against the schemas above).
  examples: [{ input: { order_id: 'A1' }, output: { order_id: 'A1', status: 'shipped' } }],
  errorExamples: [{ input: { order_id: 'Z9' }, error: { code: 'ORDER_NOT_FOUND', message: 'no order Z9' } }],
  async run({ order_id }) {
    const status = ORDERS[order_id.toUpperCase()];
    if (!status) throw new ToolError('ORDER_NOT_FOUND', \`no order \${order_id}\`);
    return { order_id, status };
  },
});
`;
