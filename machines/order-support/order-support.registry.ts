// Generated from order-support.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:33c75c8cad13493d9721b4ee953c539607e248e718a3853ed4f031dab30de20b generator:flowing@0.1.0
import { issueRefund } from "../../tools/issue_refund.js";
import { queryOrder } from "../../tools/query_order.js";
import { resolveUser } from "../../tools/resolve_user.js";
import { traceShipment } from "../../tools/trace_shipment.js";

/** The tools order-support may call, by name. */
export const orderSupportTools = {
  issue_refund: issueRefund,
  query_order: queryOrder,
  resolve_user: resolveUser,
  trace_shipment: traceShipment,
} as const;

export type OrderSupportTools = typeof orderSupportTools;
