// Generated from incident-triage.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:c691669e51cc4985b9885be80a3cb39f20a23886faea906a431a25e3994ef5db generator:flowing@0.1.0
import { assign, setup, type InputFrom, type OutputFrom } from "xstate";
import { asText, defineMachine, fromLlm, fromTool } from "@flowing/runtime";
import { incidentTriageTools } from "./incident-triage.registry.js";

export interface IncidentTriageContext {
  service: string;
  severity: "warning" | "critical";
  logs?: string[];
  errorCount: number;
  p99Ms?: number;
  errorRate?: number;
  summary?: string;
  pageId?: string;
  partial: boolean;
}

export type IncidentTriageEvent =
  | { type: "ALERT"; service: string; severity: "warning" | "critical" }
  | { type: "RESOLVE" };

export type IncidentTriageInput = Partial<IncidentTriageContext>;

type EventOf<TType extends IncidentTriageEvent["type"]> = Extract<IncidentTriageEvent, { type: TType }>;

const actors = {
  "tool.fetch_logs": fromTool(incidentTriageTools.fetch_logs),
  "tool.fetch_metrics": fromTool(incidentTriageTools.fetch_metrics),
  "tool.page_oncall": fromTool(incidentTriageTools.page_oncall),
  "llm.generate": fromLlm("generate"),
};
type Input<TActor extends keyof typeof actors> = InputFrom<(typeof actors)[TActor]>;
type Output<TActor extends keyof typeof actors> = OutputFrom<(typeof actors)[TActor]>;

/** The arguments of each tool call, by state: what the invoke passes, and what an approval shows before it runs. */
const toolArgs = {
  fetching_logs: (context: IncidentTriageContext): Input<"tool.fetch_logs">["args"] => ({
    service: context.service,
    minutes: 15,
  }),
  fetching_metrics: (context: IncidentTriageContext): Input<"tool.fetch_metrics">["args"] => ({
    service: context.service,
  }),
  paging: (context: IncidentTriageContext): Input<"tool.page_oncall">["args"] => ({
    service: context.service,
    summary: context.summary ?? "",
  }),
};

export const incidentTriageMachine = setup({
  types: {} as { context: IncidentTriageContext; events: IncidentTriageEvent; input: IncidentTriageInput | undefined },
  actors,
  guards: {
    // context.severity == 'critical'
    summarizeDoneToPaging: ({ context }) => context.severity === "critical",
  },
  actions: {
    setServiceAndSeverity: assign({
      service: (_, event: EventOf<"ALERT">) => event.service,
      severity: (_, event: EventOf<"ALERT">) => event.severity,
    }),
    setPartial: assign({ partial: () => true }),
    setLogsAndErrorCount: assign({
      logs: (_, output: Output<"tool.fetch_logs">) => output.lines,
      errorCount: (_, output: Output<"tool.fetch_logs">) => output.errorCount,
    }),
    setP99MsAndErrorRate: assign({
      p99Ms: (_, output: Output<"tool.fetch_metrics">) => output.p99Ms,
      errorRate: (_, output: Output<"tool.fetch_metrics">) => output.errorRate,
    }),
    setSummary: assign({ summary: (_, output: Output<"llm.generate">) => output.text }),
    setPageId: assign({ pageId: (_, output: Output<"tool.page_oncall">) => output.pageId }),
    setSeverity: assign({ severity: (_, event: EventOf<"ALERT">) => event.severity }),
  },
}).createMachine({
  id: "incident-triage",
  description: "Gathers logs and metrics in parallel, summarises, and pages on-call for critical alerts.",
  context: ({ input }) => ({ service: "", severity: "warning", errorCount: 0, partial: false, ...input }),
  initial: "waiting",
  states: {
    waiting: {
      tags: ["waiting"],
      on: { ALERT: { target: "gathering", actions: { type: "setServiceAndSeverity", params: ({ event }) => event } } },
    },
    gathering: {
      type: "parallel",
      description: "Logs and metrics are fetched at the same time; after 8 s we go on with what we have.",
      after: { 8000: { target: "summarize", actions: "setPartial" } },
      onDone: "summarize",
      states: {
        logs: {
          initial: "fetching_logs",
          states: {
            fetching_logs: {
              invoke: {
                id: "fetching_logs",
                src: "tool.fetch_logs",
                input: ({ context }): Input<"tool.fetch_logs"> => ({ args: toolArgs.fetching_logs(context) }),
                onDone: {
                  target: "logs_ready",
                  actions: { type: "setLogsAndErrorCount", params: ({ event }) => event.output },
                },
                onError: "logs_ready",
              },
            },
            logs_ready: { type: "final" },
          },
        },
        metrics: {
          initial: "fetching_metrics",
          states: {
            fetching_metrics: {
              invoke: {
                id: "fetching_metrics",
                src: "tool.fetch_metrics",
                input: ({ context }): Input<"tool.fetch_metrics"> => ({ args: toolArgs.fetching_metrics(context) }),
                onDone: {
                  target: "metrics_ready",
                  actions: { type: "setP99MsAndErrorRate", params: ({ event }) => event.output },
                },
                onError: "metrics_ready",
              },
            },
            metrics_ready: { type: "final" },
          },
        },
      },
    },
    summarize: {
      invoke: {
        id: "summarize",
        src: "llm.generate",
        input: ({ context }): Input<"llm.generate"> => ({
          kind: "generate",
          prompt:
            "Summarise the incident on " + asText(context.service) + ": " + asText(context.errorCount) +
            " errors, p99 " + asText(context.p99Ms) + " ms, error rate " + asText(context.errorRate) + ".",
          scripted: {
            reply:
              asText(context.service) + ": " + asText(context.errorCount) + " errors, p99 " + asText(context.p99Ms) +
              " ms.",
          },
        }),
        onDone: [
          {
            target: "paging",
            guard: "summarizeDoneToPaging",
            actions: { type: "setSummary", params: ({ event }) => event.output },
          },
          { target: "monitoring", actions: { type: "setSummary", params: ({ event }) => event.output } },
        ],
        onError: "monitoring",
      },
    },
    paging: {
      invoke: {
        id: "paging",
        src: "tool.page_oncall",
        input: ({ context }): Input<"tool.page_oncall"> => ({ args: toolArgs.paging(context) }),
        onDone: { target: "monitoring", actions: { type: "setPageId", params: ({ event }) => event.output } },
        onError: "monitoring",
      },
    },
    monitoring: {
      tags: ["waiting"],
      on: {
        RESOLVE: "resolved",
        ALERT: { target: "gathering", actions: { type: "setSeverity", params: ({ event }) => event } },
      },
    },
    resolved: { type: "final" },
  },
});

/** The machine with its tools and run-time contract, for `createRuntime({ machines: [incidentTriage] })`. */
export const incidentTriage = defineMachine<typeof incidentTriageMachine, IncidentTriageEvent>({
  id: "incident-triage",
  specHash: "c691669e51cc4985b9885be80a3cb39f20a23886faea906a431a25e3994ef5db",
  machine: incidentTriageMachine,
  tools: incidentTriageTools,
  contextFields: {
    service: { type: "string" },
    severity: { type: "enum", values: ["warning", "critical"] },
    logs: { type: "array", optional: true, items: { type: "string" } },
    errorCount: { type: "number" },
    p99Ms: { type: "number", optional: true },
    errorRate: { type: "number", optional: true },
    summary: { type: "string", optional: true },
    pageId: { type: "string", optional: true },
    partial: { type: "boolean" },
  },
  eventFields: {
    ALERT: { service: { type: "string" }, severity: { type: "enum", values: ["warning", "critical"] } },
    RESOLVE: {},
  },
  invokes: {
    fetching_logs: { tool: "fetch_logs", args: toolArgs.fetching_logs },
    fetching_metrics: { tool: "fetch_metrics", args: toolArgs.fetching_metrics },
    summarize: { llm: "generate" },
    paging: { tool: "page_oncall", args: toolArgs.paging },
  },
});
