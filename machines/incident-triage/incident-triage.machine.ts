// Generated from incident-triage.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:c691669e51cc4985b9885be80a3cb39f20a23886faea906a431a25e3994ef5db generator:flowing@0.1.0
import { assign, setup } from "xstate";
import { asText, defineMachine, fromLlm, fromTool, type GenerateRequest, type ToolCallInput, type ToolInput } from "@flowing/runtime";
import type { FlowSpec } from "@flowing/spec";
import { incidentTriageTools } from "./incident-triage.registry.ts";

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

export type IncidentTriageInput = { service?: string; severity?: "warning" | "critical"; logs?: string[]; errorCount?: number; p99Ms?: number; errorRate?: number; summary?: string; pageId?: string; partial?: boolean };

export const incidentTriageMachine = setup({
  types: {} as { context: IncidentTriageContext; events: IncidentTriageEvent; input: IncidentTriageInput | undefined },
  actors: {
    "tool.fetch_logs": fromTool(incidentTriageTools.fetch_logs),
    "tool.fetch_metrics": fromTool(incidentTriageTools.fetch_metrics),
    "tool.page_oncall": fromTool(incidentTriageTools.page_oncall),
    "llm.generate.summarize": fromLlm("generate"),
  },
}).createMachine({
  id: "incident-triage",
  description: "Gathers logs and metrics in parallel, summarises, and pages on-call for critical alerts.",
  context: ({ input }) => ({
    service: "",
    severity: "warning",
    errorCount: 0,
    partial: false,
    ...input,
  }),
  initial: "waiting",
  states: {
    waiting: {
      tags: ["waiting"],
      on: {
        "ALERT": {
          target: "#incident-triage.gathering",
          actions: [
            assign({
              service: ({ context, event }) => event.service,
              severity: ({ context, event }) => event.severity,
            }),
          ],
        },
      },
    },
    gathering: {
      type: "parallel",
      description: "Logs and metrics are fetched at the same time; after 8 s we go on with what we have.",
      after: {
        8000: {
          target: "#incident-triage.summarize",
          actions: [
            assign({
              partial: ({ context }) => true,
            }),
          ],
        },
      },
      onDone: {
        target: "#incident-triage.summarize",
      },
      states: {
        logs: {
          initial: "fetching_logs",
          states: {
            fetching_logs: {
              invoke: {
                id: "fetching_logs",
                src: "tool.fetch_logs",
                input: ({ context }): ToolCallInput<ToolInput<typeof incidentTriageTools.fetch_logs>> => ({
                  args: {
                    service: context.service,
                    minutes: 15,
                  },
                }),
                onDone: {
                  target: "#incident-triage.gathering.logs.logs_ready",
                  actions: [
                    assign({
                      logs: ({ context, event }) => event.output.lines,
                      errorCount: ({ context, event }) => event.output.errorCount,
                    }),
                  ],
                },
                onError: {
                  target: "#incident-triage.gathering.logs.logs_ready",
                },
              },
            },
            logs_ready: {
              type: "final",
            },
          },
        },
        metrics: {
          initial: "fetching_metrics",
          states: {
            fetching_metrics: {
              invoke: {
                id: "fetching_metrics",
                src: "tool.fetch_metrics",
                input: ({ context }): ToolCallInput<ToolInput<typeof incidentTriageTools.fetch_metrics>> => ({
                  args: {
                    service: context.service,
                  },
                }),
                onDone: {
                  target: "#incident-triage.gathering.metrics.metrics_ready",
                  actions: [
                    assign({
                      p99Ms: ({ context, event }) => event.output.p99Ms,
                      errorRate: ({ context, event }) => event.output.errorRate,
                    }),
                  ],
                },
                onError: {
                  target: "#incident-triage.gathering.metrics.metrics_ready",
                },
              },
            },
            metrics_ready: {
              type: "final",
            },
          },
        },
      },
    },
    summarize: {
      invoke: {
        id: "summarize",
        src: "llm.generate.summarize",
        input: ({ context }): GenerateRequest => ({
          kind: "generate",
          prompt: "Summarise the incident on " + asText(context.service) + ": " + asText(context.errorCount) + " errors, p99 " + asText(context.p99Ms) + " ms, error rate " + asText(context.errorRate) + ".",
          scripted: {
            reply: asText(context.service) + ": " + asText(context.errorCount) + " errors, p99 " + asText(context.p99Ms) + " ms.",
          },
        }),
        onDone: [
          {
            target: "#incident-triage.paging",
            guard: ({ context, event }) => (context.severity === "critical"),
            actions: [
              assign({
                summary: ({ context, event }) => event.output.text,
              }),
            ],
          },
          {
            target: "#incident-triage.monitoring",
            actions: [
              assign({
                summary: ({ context, event }) => event.output.text,
              }),
            ],
          },
        ],
        onError: {
          target: "#incident-triage.monitoring",
        },
      },
    },
    paging: {
      invoke: {
        id: "paging",
        src: "tool.page_oncall",
        input: ({ context }): ToolCallInput<ToolInput<typeof incidentTriageTools.page_oncall>> => ({
          args: {
            service: context.service,
            summary: (context.summary ?? ""),
          },
        }),
        onDone: {
          target: "#incident-triage.monitoring",
          actions: [
            assign({
              pageId: ({ context, event }) => event.output.pageId,
            }),
          ],
        },
        onError: {
          target: "#incident-triage.monitoring",
        },
      },
    },
    monitoring: {
      tags: ["waiting"],
      on: {
        "RESOLVE": {
          target: "#incident-triage.resolved",
        },
        "ALERT": {
          target: "#incident-triage.gathering",
          actions: [
            assign({
              severity: ({ context, event }) => event.severity,
            }),
          ],
        },
      },
    },
    resolved: {
      type: "final",
    },
  },
});

const spec: FlowSpec = {
  specVersion: 1,
  id: "incident-triage",
  description: "Gathers logs and metrics in parallel, summarises, and pages on-call for critical alerts.",
  context: {
    service: {
      type: "string",
      default: "",
    },
    severity: {
      type: "enum",
      values: ["warning", "critical"],
      default: "warning",
    },
    logs: {
      type: "array",
      optional: true,
      items: {
        type: "string",
      },
    },
    errorCount: {
      type: "number",
      default: 0,
    },
    p99Ms: {
      type: "number",
      optional: true,
    },
    errorRate: {
      type: "number",
      optional: true,
    },
    summary: {
      type: "string",
      optional: true,
    },
    pageId: {
      type: "string",
      optional: true,
    },
    partial: {
      type: "boolean",
      default: false,
    },
  },
  events: {
    ALERT: {
      service: {
        type: "string",
      },
      severity: {
        type: "enum",
        values: ["warning", "critical"],
      },
    },
    RESOLVE: {},
  },
  initial: "waiting",
  states: {
    waiting: {
      tags: ["waiting"],
      on: {
        ALERT: {
          target: "gathering",
          assign: {
            service: "event.service",
            severity: "event.severity",
          },
        },
      },
    },
    gathering: {
      type: "parallel",
      description: "Logs and metrics are fetched at the same time; after 8 s we go on with what we have.",
      states: {
        logs: {
          initial: "fetching_logs",
          states: {
            fetching_logs: {
              invoke: {
                tool: "fetch_logs",
                input: {
                  service: "context.service",
                  minutes: "15",
                },
                onDone: {
                  target: "logs_ready",
                  assign: {
                    logs: "output.lines",
                    errorCount: "output.errorCount",
                  },
                },
                onError: "logs_ready",
              },
            },
            logs_ready: {
              type: "final",
            },
          },
        },
        metrics: {
          initial: "fetching_metrics",
          states: {
            fetching_metrics: {
              invoke: {
                tool: "fetch_metrics",
                input: {
                  service: "context.service",
                },
                onDone: {
                  target: "metrics_ready",
                  assign: {
                    p99Ms: "output.p99Ms",
                    errorRate: "output.errorRate",
                  },
                },
                onError: "metrics_ready",
              },
            },
            metrics_ready: {
              type: "final",
            },
          },
        },
      },
      after: {
        "8000": {
          target: "summarize",
          assign: {
            partial: "true",
          },
        },
      },
      onDone: "summarize",
    },
    summarize: {
      invoke: {
        llm: "generate",
        prompt: "Summarise the incident on {{ context.service }}: {{ context.errorCount }} errors, p99 {{ context.p99Ms }} ms, error rate {{ context.errorRate }}.",
        scripted: {
          reply: "{{ context.service }}: {{ context.errorCount }} errors, p99 {{ context.p99Ms }} ms.",
        },
        onDone: [
          {
            target: "paging",
            guard: "context.severity == 'critical'",
            assign: {
              summary: "output.text",
            },
          },
          {
            target: "monitoring",
            assign: {
              summary: "output.text",
            },
          },
        ],
        onError: "monitoring",
      },
    },
    paging: {
      invoke: {
        tool: "page_oncall",
        input: {
          service: "context.service",
          summary: "context.summary ?? ''",
        },
        onDone: {
          target: "monitoring",
          assign: {
            pageId: "output.pageId",
          },
        },
        onError: "monitoring",
      },
    },
    monitoring: {
      tags: ["waiting"],
      on: {
        RESOLVE: "resolved",
        ALERT: {
          target: "gathering",
          assign: {
            severity: "event.severity",
          },
        },
      },
    },
    resolved: {
      type: "final",
    },
  },
};

/** The machine with its spec and tools, ready for `createRuntime({ machines: [incidentTriage] })`. */
export const incidentTriage = defineMachine<typeof incidentTriageMachine, IncidentTriageEvent>({
  id: "incident-triage",
  specHash: "c691669e51cc4985b9885be80a3cb39f20a23886faea906a431a25e3994ef5db",
  spec,
  machine: incidentTriageMachine,
  tools: incidentTriageTools,
});
