// Generated from order-support.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:631df83199662cdc754657422eb7bee4f39ff1f82769bdcb98e15287f11211b5 generator:flowing@0.1.0
import { issueRefund } from "../../tools/issue_refund.ts";
import { queryOrder } from "../../tools/query_order.ts";
import { resolveUser } from "../../tools/resolve_user.ts";
import { traceShipment } from "../../tools/trace_shipment.ts";

/** The tools order-support may call, by name. */
export const orderSupportTools = {
  issue_refund: issueRefund,
  query_order: queryOrder,
  resolve_user: resolveUser,
  trace_shipment: traceShipment,
} as const;

export type OrderSupportTools = typeof orderSupportTools;
