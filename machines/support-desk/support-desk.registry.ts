// Generated from support-desk.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:04da13c96de0adc6b37b70b0570dc4c42eedf642172e89c821a97a8cfa5e8053 generator:flowing@0.1.0
import { faqLookup } from "../../tools/faq_lookup.js";

/** The tools support-desk may call, by name. */
export const supportDeskTools = {
  faq_lookup: faqLookup,
} as const;

export type SupportDeskTools = typeof supportDeskTools;
