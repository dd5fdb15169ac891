// Generated from support-orders.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:b72a9fbc1f2e44a893798143b42cc657baf3a9bc5046528dc8ff22e3fc5c640d generator:flowing@0.1.0
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
