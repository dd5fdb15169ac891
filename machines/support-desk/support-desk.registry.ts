// Generated from support-desk.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:6c984dab2887455c26f0abe9be61654b638372c8f616c62cadf0f901de8e9914 generator:flowing@0.1.0
import { faqLookup } from "../../tools/faq_lookup.js";

/** The tools support-desk may call, by name. */
export const supportDeskTools = {
  faq_lookup: faqLookup,
} as const;

export type SupportDeskTools = typeof supportDeskTools;
