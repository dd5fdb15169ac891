// Generated from support-orders.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:57d2399fd3f6eb62ce5d85d356f08a2b0ad26179ca45df6cc131a09667c90725 generator:flowing@0.1.0
import { queryOrder } from "../../tools/query_order.js";
import { resolveUser } from "../../tools/resolve_user.js";
import { traceShipment } from "../../tools/trace_shipment.js";

/** The tools support-orders may call, by name. */
export const supportOrdersTools = {
  query_order: queryOrder,
  resolve_user: resolveUser,
  trace_shipment: traceShipment,
} as const;

export type SupportOrdersTools = typeof supportOrdersTools;
