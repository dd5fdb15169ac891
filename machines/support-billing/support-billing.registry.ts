// Generated from support-billing.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:b15dff23c93fe14f93bc367b7443ce6d44e8eb34c4daa312713cb61b93f16033 generator:flowing@0.1.0
import { issueRefund } from "../../tools/issue_refund.js";
import { queryOrder } from "../../tools/query_order.js";
import { resolveUser } from "../../tools/resolve_user.js";

/** The tools support-billing may call, by name. */
export const supportBillingTools = {
  issue_refund: issueRefund,
  query_order: queryOrder,
  resolve_user: resolveUser,
} as const;

export type SupportBillingTools = typeof supportBillingTools;
