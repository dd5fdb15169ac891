/** Demo data behind the example tools, so the examples run offline. Real deployments call their own services. */
export const DEMO_CUSTOMERS: Record<string, { id: string; name: string; tier: 'standard' | 'gold' }> = {
  guest: { id: 'c-100', name: 'Guest', tier: 'standard' },
  'u-ada': { id: 'c-200', name: 'Ada Lovelace', tier: 'gold' },
};

export const DEMO_ORDERS: Record<
  string,
  { order_id: string; status: 'processing' | 'shipped' | 'delivered'; total: number; tracking_number?: string }
> = {
  A1001: { order_id: 'A1001', status: 'shipped', total: 59.9, tracking_number: 'TRK-88231' },
  A1002: { order_id: 'A1002', status: 'processing', total: 120 },
  A1003: { order_id: 'A1003', status: 'delivered', total: 15.5, tracking_number: 'TRK-11111' },
};

export const DEMO_SHIPMENTS: Record<string, { carrier: string; location: string; eta: string }> = {
  'TRK-88231': { carrier: 'Parcelo', location: 'Leipzig hub', eta: '2026-12-02' },
  'TRK-11111': { carrier: 'Parcelo', location: 'delivered', eta: '2026-11-20' },
};

/** The shop's answers to general questions, by topic, with the words that pick them. */
export const DEMO_FAQ: Record<string, { keywords: string[]; answer: string }> = {
  shipping: { keywords: ['ship', 'deliver', 'how long'], answer: 'Orders ship within 2 working days; delivery takes 2-4 days.' },
  returns: { keywords: ['return', 'send back'], answer: 'Items can be returned within 30 days for a full refund.' },
  payment: { keywords: ['pay', 'card', 'invoice'], answer: 'We take cards and invoices; a card is charged when the order is placed.' },
};
