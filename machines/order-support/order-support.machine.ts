// Generated from order-support.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:33c75c8cad13493d9721b4ee953c539607e248e718a3853ed4f031dab30de20b generator:flowing@0.1.0
import { assign, setup } from "xstate";
import { asText, defineMachine, fromLlm, fromTool, type FlowError, type ClassifyRequest, type ExtractRequest, type GenerateRequest, type ToolCallInput, type ToolInput } from "@flowing/runtime";
import type { FlowSpec } from "@flowing/spec";
import { orderSupportTools } from "./order-support.registry.ts";

export interface OrderSupportContext {
  userId: string;
  lastMessage?: string;
  intent?: "order_query" | "refund" | "other";
  orderId?: string;
  customer?: { id: string; name: string; tier: "standard" | "gold" };
  order?: { order_id: string; status: "processing" | "shipped" | "delivered"; total: number; tracking_number?: string };
  shipment?: { carrier: string; location: string; eta: string };
  refundId?: string;
  reply?: string;
  error?: string;
}

export type OrderSupportEvent =
  | { type: "USER_MESSAGE"; text: string }
  | { type: "APPROVE" }
  | { type: "REJECT"; reason?: string }
  | { type: "CANCEL" };

export type OrderSupportInput = { userId?: string; lastMessage?: string; intent?: "order_query" | "refund" | "other"; orderId?: string; customer?: { id: string; name: string; tier: "standard" | "gold" }; order?: { order_id: string; status: "processing" | "shipped" | "delivered"; total: number; tracking_number?: string }; shipment?: { carrier: string; location: string; eta: string }; refundId?: string; reply?: string; error?: string };

export const orderSupportMachine = setup({
  types: {} as { context: OrderSupportContext; events: OrderSupportEvent; input: OrderSupportInput | undefined },
  actors: {
    "tool.issue_refund": fromTool(orderSupportTools.issue_refund),
    "tool.query_order": fromTool(orderSupportTools.query_order),
    "tool.resolve_user": fromTool(orderSupportTools.resolve_user),
    "tool.trace_shipment": fromTool(orderSupportTools.trace_shipment),
    "llm.classify.classify": fromLlm<"refund" | "order_query" | "other">("classify"),
    "llm.extract.extract_order_id": fromLlm<{ orderId?: string }>("extract"),
    "llm.generate.compose_reply": fromLlm("generate"),
    "llm.generate.small_talk": fromLlm("generate"),
  },
}).createMachine({
  id: "order-support",
  description: "Answers order questions; refunds need a person's approval.",
  context: ({ input }) => ({
    userId: "guest",
    ...input,
  }),
  initial: "active",
  states: {
    active: {
      description: "The conversation; CANCEL ends it from anywhere inside.",
      initial: "idle",
      on: {
        "CANCEL": {
          target: "#order-support.cancelled",
        },
      },
      states: {
        idle: {
          tags: ["waiting"],
          on: {
            "USER_MESSAGE": {
              target: "#order-support.active.classify",
              actions: [
                assign({
                  lastMessage: ({ context, event }) => event.text,
                }),
              ],
            },
          },
        },
        classify: {
          invoke: {
            id: "classify",
            src: "llm.classify.classify",
            input: ({ context }): ClassifyRequest => ({
              kind: "classify",
              model: "gpt-4o-mini",
              text: asText((context.lastMessage ?? "")),
              labels: ["refund", "order_query", "other"],
              scripted: {
                keywords: {
                  refund: ["refund", "money back", "return"],
                  order_query: ["order", "where", "status", "track", "parcel"],
                },
              },
            }),
            onDone: [
              {
                target: "#order-support.active.small_talk",
                guard: ({ context, event }) => (event.output.label === "other"),
                actions: [
                  assign({
                    intent: ({ context, event }) => event.output.label,
                  }),
                ],
              },
              {
                target: "#order-support.active.extract_order_id",
                actions: [
                  assign({
                    intent: ({ context, event }) => event.output.label,
                  }),
                ],
              },
            ],
            onError: {
              target: "#order-support.failed",
              actions: [
                assign({
                  error: ({ context, event }) => (event.error as FlowError).code,
                }),
              ],
            },
          },
        },
        extract_order_id: {
          invoke: {
            id: "extract_order_id",
            src: "llm.extract.extract_order_id",
            input: ({ context }): ExtractRequest => ({
              kind: "extract",
              model: "gpt-4o-mini",
              text: asText((context.lastMessage ?? "")),
              fields: {
                orderId: {
                  type: "string",
                  optional: true,
                },
              },
              scripted: {
                patterns: {
                  orderId: "\\b([A-Z][0-9]{4})\\b",
                },
              },
            }),
            onDone: [
              {
                target: "#order-support.active.ask_order_id",
                guard: ({ context, event }) => (event.output.orderId === undefined),
              },
              {
                target: "#order-support.active.resolve_user",
                actions: [
                  assign({
                    orderId: ({ context, event }) => event.output.orderId,
                  }),
                ],
              },
            ],
            onError: {
              target: "#order-support.active.ask_order_id",
            },
          },
        },
        ask_order_id: {
          tags: ["waiting"],
          entry: [
            assign({
              reply: ({ context }) => "Which order is it about? Please send the order number, e.g. A1001.",
            }),
          ],
          on: {
            "USER_MESSAGE": {
              target: "#order-support.active.extract_order_id",
              actions: [
                assign({
                  lastMessage: ({ context, event }) => event.text,
                }),
              ],
            },
          },
        },
        resolve_user: {
          invoke: {
            id: "resolve_user",
            src: "tool.resolve_user",
            input: ({ context }): ToolCallInput<ToolInput<typeof orderSupportTools.resolve_user>> => ({
              args: {
                user_id: context.userId,
              },
            }),
            onDone: {
              target: "#order-support.active.fetch_order",
              actions: [
                assign({
                  customer: ({ context, event }) => event.output,
                }),
              ],
            },
            onError: {
              target: "#order-support.failed",
              actions: [
                assign({
                  error: ({ context, event }) => (event.error as FlowError).code,
                }),
              ],
            },
          },
        },
        fetch_order: {
          invoke: {
            id: "fetch_order",
            src: "tool.query_order",
            input: ({ context }): ToolCallInput<ToolInput<typeof orderSupportTools.query_order>> => ({
              args: {
                order_id: (context.orderId ?? ""),
                customer_id: (context.customer?.id ?? ""),
              },
            }),
            onDone: [
              {
                target: "#order-support.active.await_approval",
                guard: ({ context, event }) => (context.intent === "refund"),
                actions: [
                  assign({
                    order: ({ context, event }) => event.output,
                  }),
                ],
              },
              {
                target: "#order-support.active.trace_shipment",
                guard: ({ context, event }) => (event.output.status === "shipped"),
                actions: [
                  assign({
                    order: ({ context, event }) => event.output,
                  }),
                ],
              },
              {
                target: "#order-support.active.compose_reply",
                actions: [
                  assign({
                    order: ({ context, event }) => event.output,
                  }),
                ],
              },
            ],
            onError: [
              {
                target: "#order-support.active.order_not_found",
                guard: ({ context, event }) => ((event.error as FlowError).code === "ORDER_NOT_FOUND"),
              },
              {
                target: "#order-support.failed",
                actions: [
                  assign({
                    error: ({ context, event }) => (event.error as FlowError).code,
                  }),
                ],
              },
            ],
          },
        },
        order_not_found: {
          tags: ["waiting"],
          entry: [
            assign({
              reply: ({ context }) => (("I could not find order " + (context.orderId ?? "")) + ". Please check the number."),
            }),
          ],
          on: {
            "USER_MESSAGE": {
              target: "#order-support.active.extract_order_id",
              actions: [
                assign({
                  lastMessage: ({ context, event }) => event.text,
                }),
              ],
            },
          },
        },
        trace_shipment: {
          invoke: {
            id: "trace_shipment",
            src: "tool.trace_shipment",
            input: ({ context }): ToolCallInput<ToolInput<typeof orderSupportTools.trace_shipment>> => ({
              args: {
                tracking_number: (context.order?.tracking_number ?? ""),
              },
            }),
            onDone: {
              target: "#order-support.active.compose_reply",
              actions: [
                assign({
                  shipment: ({ context, event }) => event.output,
                }),
              ],
            },
            onError: {
              target: "#order-support.active.compose_reply",
            },
          },
        },
        compose_reply: {
          invoke: {
            id: "compose_reply",
            src: "llm.generate.compose_reply",
            input: ({ context }): GenerateRequest => ({
              kind: "generate",
              model: "gpt-4o",
              system: "You are a concise support agent. Answer only from the facts given.",
              prompt: "Customer " + asText(context.customer?.name) + " asked: " + asText(context.lastMessage) + "\nOrder " + asText(context.orderId) + " status: " + asText(context.order?.status) + "\nShipment: " + asText(context.shipment?.carrier) + " at " + asText(context.shipment?.location) + ", arriving " + asText(context.shipment?.eta),
              scripted: {
                reply: "Order " + asText(context.orderId) + " is " + asText(context.order?.status) + ". " + asText(context.shipment?.location) + " " + asText(context.shipment?.eta),
              },
            }),
            onDone: {
              target: "#order-support.active.idle",
              actions: [
                assign({
                  reply: ({ context, event }) => event.output.text,
                }),
              ],
            },
            onError: {
              target: "#order-support.failed",
              actions: [
                assign({
                  error: ({ context, event }) => (event.error as FlowError).code,
                }),
              ],
            },
          },
        },
        await_approval: {
          description: "A person approves or rejects the refund of the whole order total.",
          tags: ["approval"],
          entry: [
            assign({
              reply: ({ context }) => (((("A refund of " + context.order?.total) + " for order ") + (context.orderId ?? "")) + " is waiting for approval."),
            }),
          ],
          on: {
            "APPROVE": {
              target: "#order-support.active.refund",
            },
            "REJECT": {
              target: "#order-support.active.idle",
              actions: [
                assign({
                  reply: ({ context, event }) => ("The refund was not approved: " + (event.reason ?? "no reason given")),
                }),
              ],
            },
          },
        },
        refund: {
          invoke: {
            id: "refund",
            src: "tool.issue_refund",
            input: ({ context }): ToolCallInput<ToolInput<typeof orderSupportTools.issue_refund>> => ({
              args: {
                order_id: (context.orderId ?? ""),
                amount: (context.order?.total ?? 0),
              },
            }),
            onDone: {
              target: "#order-support.active.idle",
              actions: [
                assign({
                  refundId: ({ context, event }) => event.output.refund_id,
                  reply: ({ context, event }) => (((("Refund " + event.output.refund_id) + " of ") + event.output.amount) + " is on its way."),
                }),
              ],
            },
            onError: {
              target: "#order-support.failed",
              actions: [
                assign({
                  error: ({ context, event }) => (event.error as FlowError).code,
                }),
              ],
            },
          },
        },
        small_talk: {
          invoke: {
            id: "small_talk",
            src: "llm.generate.small_talk",
            input: ({ context }): GenerateRequest => ({
              kind: "generate",
              model: "gpt-4o",
              prompt: "Reply briefly and offer help with orders: " + asText(context.lastMessage),
              scripted: {
                reply: "I can help with orders and refunds. Tell me your order number.",
              },
            }),
            onDone: {
              target: "#order-support.active.idle",
              actions: [
                assign({
                  reply: ({ context, event }) => event.output.text,
                }),
              ],
            },
            onError: {
              target: "#order-support.failed",
              actions: [
                assign({
                  error: ({ context, event }) => (event.error as FlowError).code,
                }),
              ],
            },
          },
        },
      },
    },
    failed: {
      type: "final",
      description: "A call failed in a way the flow does not handle.",
    },
    cancelled: {
      type: "final",
    },
  },
});

const spec: FlowSpec = {
  specVersion: 1,
  id: "order-support",
  description: "Answers order questions; refunds need a person's approval.",
  context: {
    userId: {
      type: "string",
      default: "guest",
    },
    lastMessage: {
      type: "string",
      optional: true,
    },
    intent: {
      type: "enum",
      optional: true,
      values: ["order_query", "refund", "other"],
    },
    orderId: {
      type: "string",
      optional: true,
    },
    customer: {
      type: "object",
      optional: true,
      fields: {
        id: {
          type: "string",
        },
        name: {
          type: "string",
        },
        tier: {
          type: "enum",
          values: ["standard", "gold"],
        },
      },
    },
    order: {
      type: "object",
      optional: true,
      fields: {
        order_id: {
          type: "string",
        },
        status: {
          type: "enum",
          values: ["processing", "shipped", "delivered"],
        },
        total: {
          type: "number",
        },
        tracking_number: {
          type: "string",
          optional: true,
        },
      },
    },
    shipment: {
      type: "object",
      optional: true,
      fields: {
        carrier: {
          type: "string",
        },
        location: {
          type: "string",
        },
        eta: {
          type: "string",
        },
      },
    },
    refundId: {
      type: "string",
      optional: true,
    },
    reply: {
      type: "string",
      optional: true,
    },
    error: {
      type: "string",
      optional: true,
    },
  },
  events: {
    USER_MESSAGE: {
      text: {
        type: "string",
      },
    },
    APPROVE: {},
    REJECT: {
      reason: {
        type: "string",
        optional: true,
      },
    },
    CANCEL: {},
  },
  models: {
    classify: "gpt-4o-mini",
    extract: "gpt-4o-mini",
    generate: "gpt-4o",
  },
  initial: "active",
  states: {
    active: {
      description: "The conversation; CANCEL ends it from anywhere inside.",
      initial: "idle",
      states: {
        idle: {
          tags: ["waiting"],
          on: {
            USER_MESSAGE: {
              target: "classify",
              assign: {
                lastMessage: "event.text",
              },
            },
          },
        },
        classify: {
          invoke: {
            llm: "classify",
            input: "context.lastMessage ?? ''",
            labels: ["refund", "order_query", "other"],
            scripted: {
              keywords: {
                refund: ["refund", "money back", "return"],
                order_query: ["order", "where", "status", "track", "parcel"],
              },
            },
            onDone: [
              {
                target: "small_talk",
                guard: "output.label == 'other'",
                assign: {
                  intent: "output.label",
                },
              },
              {
                target: "extract_order_id",
                assign: {
                  intent: "output.label",
                },
              },
            ],
            onError: {
              target: "failed",
              assign: {
                error: "error.code",
              },
            },
          },
        },
        extract_order_id: {
          invoke: {
            llm: "extract",
            input: "context.lastMessage ?? ''",
            fields: {
              orderId: {
                type: "string",
                optional: true,
              },
            },
            scripted: {
              patterns: {
                orderId: "\\b([A-Z][0-9]{4})\\b",
              },
            },
            onDone: [
              {
                target: "ask_order_id",
                guard: "output.orderId == undefined",
              },
              {
                target: "resolve_user",
                assign: {
                  orderId: "output.orderId",
                },
              },
            ],
            onError: "ask_order_id",
          },
        },
        ask_order_id: {
          tags: ["waiting"],
          on: {
            USER_MESSAGE: {
              target: "extract_order_id",
              assign: {
                lastMessage: "event.text",
              },
            },
          },
          entry: {
            assign: {
              reply: "'Which order is it about? Please send the order number, e.g. A1001.'",
            },
          },
        },
        resolve_user: {
          invoke: {
            tool: "resolve_user",
            input: {
              user_id: "context.userId",
            },
            onDone: {
              target: "fetch_order",
              assign: {
                customer: "output",
              },
            },
            onError: {
              target: "failed",
              assign: {
                error: "error.code",
              },
            },
          },
        },
        fetch_order: {
          invoke: {
            tool: "query_order",
            input: {
              order_id: "context.orderId ?? ''",
              customer_id: "context.customer.id ?? ''",
            },
            retries: 2,
            onDone: [
              {
                target: "await_approval",
                guard: "context.intent == 'refund'",
                assign: {
                  order: "output",
                },
              },
              {
                target: "trace_shipment",
                guard: "output.status == 'shipped'",
                assign: {
                  order: "output",
                },
              },
              {
                target: "compose_reply",
                assign: {
                  order: "output",
                },
              },
            ],
            onError: [
              {
                target: "order_not_found",
                guard: "error.code == 'ORDER_NOT_FOUND'",
              },
              {
                target: "failed",
                assign: {
                  error: "error.code",
                },
              },
            ],
          },
        },
        order_not_found: {
          tags: ["waiting"],
          on: {
            USER_MESSAGE: {
              target: "extract_order_id",
              assign: {
                lastMessage: "event.text",
              },
            },
          },
          entry: {
            assign: {
              reply: "'I could not find order ' + (context.orderId ?? '') + '. Please check the number.'",
            },
          },
        },
        trace_shipment: {
          invoke: {
            tool: "trace_shipment",
            input: {
              tracking_number: "context.order.tracking_number ?? ''",
            },
            onDone: {
              target: "compose_reply",
              assign: {
                shipment: "output",
              },
            },
            onError: "compose_reply",
          },
        },
        compose_reply: {
          invoke: {
            llm: "generate",
            prompt: "Customer {{ context.customer.name }} asked: {{ context.lastMessage }}\nOrder {{ context.orderId }} status: {{ context.order.status }}\nShipment: {{ context.shipment.carrier }} at {{ context.shipment.location }}, arriving {{ context.shipment.eta }}",
            system: "You are a concise support agent. Answer only from the facts given.",
            scripted: {
              reply: "Order {{ context.orderId }} is {{ context.order.status }}. {{ context.shipment.location }} {{ context.shipment.eta }}",
            },
            onDone: {
              target: "idle",
              assign: {
                reply: "output.text",
              },
            },
            onError: {
              target: "failed",
              assign: {
                error: "error.code",
              },
            },
          },
        },
        await_approval: {
          description: "A person approves or rejects the refund of the whole order total.",
          tags: ["approval"],
          on: {
            APPROVE: "refund",
            REJECT: {
              target: "idle",
              assign: {
                reply: "'The refund was not approved: ' + (event.reason ?? 'no reason given')",
              },
            },
          },
          entry: {
            assign: {
              reply: "'A refund of ' + context.order.total + ' for order ' + (context.orderId ?? '') + ' is waiting for approval.'",
            },
          },
        },
        refund: {
          invoke: {
            tool: "issue_refund",
            input: {
              order_id: "context.orderId ?? ''",
              amount: "context.order.total ?? 0",
            },
            onDone: {
              target: "idle",
              assign: {
                refundId: "output.refund_id",
                reply: "'Refund ' + output.refund_id + ' of ' + output.amount + ' is on its way.'",
              },
            },
            onError: {
              target: "failed",
              assign: {
                error: "error.code",
              },
            },
          },
        },
        small_talk: {
          invoke: {
            llm: "generate",
            prompt: "Reply briefly and offer help with orders: {{ context.lastMessage }}",
            scripted: {
              reply: "I can help with orders and refunds. Tell me your order number.",
            },
            onDone: {
              target: "idle",
              assign: {
                reply: "output.text",
              },
            },
            onError: {
              target: "failed",
              assign: {
                error: "error.code",
              },
            },
          },
        },
      },
      on: {
        CANCEL: "cancelled",
      },
    },
    failed: {
      type: "final",
      description: "A call failed in a way the flow does not handle.",
    },
    cancelled: {
      type: "final",
    },
  },
};

/** The machine with its spec and tools, ready for `createRuntime({ machines: [orderSupport] })`. */
export const orderSupport = defineMachine<typeof orderSupportMachine, OrderSupportEvent>({
  id: "order-support",
  specHash: "33c75c8cad13493d9721b4ee953c539607e248e718a3853ed4f031dab30de20b",
  spec,
  machine: orderSupportMachine,
  tools: orderSupportTools,
});
