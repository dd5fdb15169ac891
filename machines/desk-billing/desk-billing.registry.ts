// Generated from desk-billing.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:e6b4683506d64a0512f418668323cdec037a60f40d8799ab28166736d02e37cd generator:flowing@0.1.0
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
