import type { ConversationMessage, MemorySpec } from '@flowing/spec';

/** The facts a long support conversation must not lose, as the bench's memory keeps them. */
export const SUPPORT_MEMORY: MemorySpec = {
  window: 6,
  summarize: {
    after: 16,
    keep: {
      orderId: { type: 'string', optional: true, description: 'The order the customer is asking about now.' },
      request: { type: 'string', optional: true, description: 'What the customer asked for.' },
      answersGiven: { type: 'array', items: { type: 'string' }, description: 'Answers the assistant gave, one line each.' },
    },
    scripted: {
      patterns: {
        orderId: 'order (A\\d{4})',
        request: 'user: [^\\n]*?Request: ([^.\\n]+)',
        answersGiven: 'assistant: [^\\n]*?Answer: ([^.\\n]+)',
      },
    },
  },
};

/** One turn of the conversation: the user's message, then what the assistant and its tools added. */
export interface SupportTurn {
  user: ConversationMessage;
  replies: ConversationMessage[];
  /** The answer this turn gave (kept by the summaries), if any. */
  answer?: string;
  /** The request this turn made, if any. */
  request?: string;
}

const ORDERS = ['A1042', 'A2210', 'A3377'];
const ITEMS = ['blender', 'desk lamp', 'kettle'];
const SMALL_TALK = [
  'Thanks, that helps.',
  'Ok, one more thing about this.',
  'Could you check again please?',
  'I am still waiting for an update, the tracking page has not changed.',
  'Is there anything else I need to do on my side?',
];

/**
 * A deterministic support conversation of `count` turns: the customer asks about three orders in a row (status,
 * tracking, a refund, an address change), the assistant looks each up with tools whose results are JSON, and gives
 * answers. The first turn about each order states the request; answers carry an `Answer:` sentence.
 */
export function supportTurns(count: number): SupportTurn[] {
  const out: SupportTurn[] = [];
  let call = 0;
  for (let t = 0; t < count; t++) {
    const order = ORDERS[Math.min(ORDERS.length - 1, Math.floor((t * ORDERS.length) / count))]!;
    const item = ITEMS[ORDERS.indexOf(order)]!;
    const phase = t % 5;
    const toolCall = (name: string, args: Record<string, unknown>, result: Record<string, unknown>): ConversationMessage[] => {
      const id = `call_${++call}`;
      return [
        { role: 'assistant', content: '', toolCalls: [{ id, name, args }] },
        { role: 'tool', toolCallId: id, name, content: JSON.stringify(result), ok: true },
      ];
    };
    const record = {
      order_id: order,
      item,
      status: phase < 2 ? 'in_transit' : 'delivered',
      carrier: 'PostNord',
      tracking: `PN${7000 + t}SE`,
      events: [
        { at: `2026-11-${10 + (t % 15)}T08:00:00Z`, where: 'Malmo terminal', what: 'sorted' },
        { at: `2026-11-${11 + (t % 15)}T14:30:00Z`, where: 'Lund depot', what: 'out for delivery' },
      ],
      total: { amount: 4990 + t, currency: 'SEK' },
    };
    if (phase === 0) {
      const request = `refund or replacement for the ${item} in order ${order}`;
      const answer = `order ${order} is ${record.status}, tracking ${record.tracking}`;
      out.push({
        user: { role: 'user', content: `Hello, this is about order ${order}. Request: ${request}. It arrived damaged.` },
        replies: [
          ...toolCall('query_order', { order_id: order }, record),
          { role: 'assistant', content: `I found your order. Answer: ${answer}. I can start a refund if you want.` },
        ],
        answer,
        request,
      });
    } else if (phase === 1) {
      const answer = `shipment ${record.tracking} was last seen at Lund depot`;
      out.push({
        user: { role: 'user', content: `Where is the ${item} now? ${SMALL_TALK[t % SMALL_TALK.length]}` },
        replies: [
          ...toolCall('trace_shipment', { tracking: record.tracking }, { tracking: record.tracking, events: record.events }),
          { role: 'assistant', content: `Answer: ${answer}. It should arrive within two days.` },
        ],
        answer,
      });
    } else if (phase === 2) {
      const answer = `refund of ${record.total.amount} SEK started for order ${order}`;
      out.push({
        user: { role: 'user', content: 'Yes please, start the refund.' },
        replies: [
          ...toolCall(
            'issue_refund',
            { order_id: order, amount: record.total.amount },
            { refund_id: `R-${t}`, state: 'pending', eta_days: 5 },
          ),
          { role: 'assistant', content: `Done. Answer: ${answer}. You will see it within five working days.` },
        ],
        answer,
      });
    } else if (phase === 3) {
      out.push({
        user: { role: 'user', content: SMALL_TALK[t % SMALL_TALK.length]! },
        replies: [{ role: 'assistant', content: 'You are welcome. Is there anything else I can help you with today?' }],
      });
    } else {
      const answer = `delivery address for order ${order} cannot change after dispatch`;
      out.push({
        user: { role: 'user', content: `Can I change the delivery address of order ${order} to Storgatan 12, Lund?` },
        replies: [
          ...toolCall('query_order', { order_id: order }, record),
          { role: 'assistant', content: `Answer: ${answer}. The carrier can hold it at a pickup point instead.` },
        ],
        answer,
      });
    }
  }
  return out;
}
