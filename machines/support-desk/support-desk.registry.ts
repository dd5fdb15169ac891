// Generated from support-desk.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:3b003a0616b6f820e3ed55e9d5cfe434504203d4ba15d97d2e0d237d5127d99e generator:flowing@0.1.0
import { faqLookup } from "../../tools/faq_lookup.js";

/** The tools support-desk may call, by name. */
export const supportDeskTools = {
  faq_lookup: faqLookup,
} as const;

export type SupportDeskTools = typeof supportDeskTools;
