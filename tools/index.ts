export { resolveUser } from './resolve_user.ts';
export { queryOrder } from './query_order.ts';
export { traceShipment } from './trace_shipment.ts';
export { issueRefund } from './issue_refund.ts';
export { fetchLogs } from './fetch_logs.ts';
export { fetchMetrics } from './fetch_metrics.ts';
export { pageOncall } from './page_oncall.ts';
export { faqLookup } from './faq_lookup.ts';
