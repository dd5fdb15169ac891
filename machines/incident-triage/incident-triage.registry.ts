// Generated from incident-triage.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:c691669e51cc4985b9885be80a3cb39f20a23886faea906a431a25e3994ef5db generator:flowing@0.1.0
import { fetchLogs } from "../../tools/fetch_logs.js";
import { fetchMetrics } from "../../tools/fetch_metrics.js";
import { pageOncall } from "../../tools/page_oncall.js";

/** The tools incident-triage may call, by name. */
export const incidentTriageTools = {
  fetch_logs: fetchLogs,
  fetch_metrics: fetchMetrics,
  page_oncall: pageOncall,
} as const;

export type IncidentTriageTools = typeof incidentTriageTools;
