// Generated from desk-billing.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:6c8aa848daf5bb7e0091d3c19476c2f5cd9250a240a37630fa70bb5ef8c2e4e6 generator:flowing@0.1.0
import { issueRefund } from "../../tools/issue_refund.js";
import { queryOrder } from "../../tools/query_order.js";
import { resolveUser } from "../../tools/resolve_user.js";

/** The tools desk-billing may call, by name. */
export const deskBillingTools = {
  issue_refund: issueRefund,
  query_order: queryOrder,
  resolve_user: resolveUser,
} as const;

export type DeskBillingTools = typeof deskBillingTools;
