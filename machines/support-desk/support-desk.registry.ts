// Generated from support-desk.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:496f91f56dce11fec8b0301b3b34bd97f006d1e99b628fabd9752187ea1b4c20 generator:flowing@0.1.0
import { faqLookup } from "../../tools/faq_lookup.js";

/** The tools support-desk may call, by name. */
export const supportDeskTools = {
  faq_lookup: faqLookup,
} as const;

export type SupportDeskTools = typeof supportDeskTools;
