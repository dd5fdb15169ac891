// Generated from desk-orders.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:1b8c44ad53107fc5d537db6bb149c5dd3ec15efe977e3e98068f937592dcc6ce generator:flowing@0.1.0
import { queryOrder } from "../../tools/query_order.js";
import { resolveUser } from "../../tools/resolve_user.js";
import { traceShipment } from "../../tools/trace_shipment.js";

/** The tools desk-orders may call, by name. */
export const deskOrdersTools = {
  query_order: queryOrder,
  resolve_user: resolveUser,
  trace_shipment: traceShipment,
} as const;

export type DeskOrdersTools = typeof deskOrdersTools;
