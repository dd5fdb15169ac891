// Generated from order-support.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:33c75c8cad13493d9721b4ee953c539607e248e718a3853ed4f031dab30de20b generator:flowing@0.1.0
import { assign, setup, type InputFrom, type OutputFrom } from "xstate";
import { asText, defineMachine, fromLlm, fromTool, toFlowError, type FlowError } from "@flowing/runtime";
import { orderSupportTools } from "./order-support.registry.js";

export interface OrderSupportContext {
  userId: string;
  lastMessage?: string;
  intent?: "order_query" | "refund" | "other";
  orderId?: string;
  customer?: { id: string; name: string; tier: "standard" | "gold" };
  order?: {
    order_id: string;
    status: "processing" | "shipped" | "delivered";
    total: number;
    tracking_number?: string;
  };
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

export type OrderSupportInput = Partial<OrderSupportContext>;

type EventOf<TType extends OrderSupportEvent["type"]> = Extract<OrderSupportEvent, { type: TType }>;

const actors = {
  "tool.issue_refund": fromTool(orderSupportTools.issue_refund),
  "tool.query_order": fromTool(orderSupportTools.query_order),
  "tool.resolve_user": fromTool(orderSupportTools.resolve_user),
  "tool.trace_shipment": fromTool(orderSupportTools.trace_shipment),
  "llm.classify": fromLlm<"refund" | "order_query" | "other">("classify"),
  "llm.extract": fromLlm<{ orderId?: string }>("extract"),
  "llm.generate": fromLlm("generate"),
};
type Input<TActor extends keyof typeof actors> = InputFrom<(typeof actors)[TActor]>;
type Output<TActor extends keyof typeof actors> = OutputFrom<(typeof actors)[TActor]>;

/** The arguments of each tool call, by state: what the invoke passes, and what an approval shows before it runs. */
const toolArgs = {
  resolve_user: (context: OrderSupportContext): Input<"tool.resolve_user">["args"] => ({ user_id: context.userId }),
  fetch_order: (context: OrderSupportContext): Input<"tool.query_order">["args"] => ({
    order_id: context.orderId ?? "",
    customer_id: context.customer?.id ?? "",
  }),
  trace_shipment: (context: OrderSupportContext): Input<"tool.trace_shipment">["args"] => ({
    tracking_number: context.order?.tracking_number ?? "",
  }),
  refund: (context: OrderSupportContext): Input<"tool.issue_refund">["args"] => ({
    order_id: context.orderId ?? "",
    amount: context.order?.total ?? 0,
  }),
};

export const orderSupportMachine = setup({
  types: {} as { context: OrderSupportContext; events: OrderSupportEvent; input: OrderSupportInput | undefined },
  actors,
  guards: {
    // output.label == 'other'
    classifyDoneToSmallTalk: (_, output: Output<"llm.classify">) => output.label === "other",
    // output.orderId == undefined
    extractOrderIdDoneToAskOrderId: (_, output: Output<"llm.extract">) => output.orderId === undefined,
    // context.intent == 'refund'
    fetchOrderDoneToAwaitApproval: ({ context }) => context.intent === "refund",
    // output.status == 'shipped'
    fetchOrderDoneToTraceShipment: (_, output: Output<"tool.query_order">) => output.status === "shipped",
    // error.code == 'ORDER_NOT_FOUND'
    fetchOrderErrorToOrderNotFound: (_, error: FlowError) => error.code === "ORDER_NOT_FOUND",
  },
  actions: {
    setLastMessage: assign({ lastMessage: (_, event: EventOf<"USER_MESSAGE">) => event.text }),
    setError: assign({ error: (_, error: FlowError) => error.code }),
    setIntent: assign({ intent: (_, output: Output<"llm.classify">) => output.label }),
    setOrderId: assign({ orderId: (_, output: Output<"llm.extract">) => output.orderId }),
    // reply = 'Which order is it about? Please send the order number, e.g. A1001.'
    askOrderIdEntry: assign({ reply: () => "Which order is it about? Please send the order number, e.g. A1001." }),
    setCustomer: assign({ customer: (_, output: Output<"tool.resolve_user">) => output }),
    setOrder: assign({ order: (_, output: Output<"tool.query_order">) => output }),
    // reply = 'I could not find order ' + (context.orderId ?? '') + '. Please check the number.'
    orderNotFoundEntry: assign({
      reply: ({ context }) => "I could not find order " + (context.orderId ?? "") + ". Please check the number.",
    }),
    setShipment: assign({ shipment: (_, output: Output<"tool.trace_shipment">) => output }),
    setReply: assign({ reply: (_, output: Output<"llm.generate">) => output.text }),
    // reply = 'A refund of ' + context.order.total + ' for order ' + (context.orderId ?? '') + ' is waiting …
    awaitApprovalEntry: assign({
      reply: ({ context }) =>
        "A refund of " + context.order?.total + " for order " + (context.orderId ?? "") + " is waiting for approval.",
    }),
    // reply = 'The refund was not approved: ' + (event.reason ?? 'no reason given')
    awaitApprovalRejectToIdle: assign({
      reply: (_, event: EventOf<"REJECT">) => "The refund was not approved: " + (event.reason ?? "no reason given"),
    }),
    // refundId = output.refund_id; reply = 'Refund ' + output.refund_id + ' of ' + output.amount + ' is on i…
    setRefundIdAndReply: assign({
      refundId: (_, output: Output<"tool.issue_refund">) => output.refund_id,
      reply: (_, output: Output<"tool.issue_refund">) =>
        "Refund " + output.refund_id + " of " + output.amount + " is on its way.",
    }),
  },
}).createMachine({
  id: "order-support",
  description: "Answers order questions; refunds need a person's approval.",
  context: ({ input }) => ({ userId: "guest", ...input }),
  initial: "active",
  states: {
    active: {
      description: "The conversation; CANCEL ends it from anywhere inside.",
      initial: "idle",
      on: { CANCEL: "cancelled" },
      states: {
        idle: {
          tags: ["waiting"],
          on: {
            USER_MESSAGE: { target: "classify", actions: { type: "setLastMessage", params: ({ event }) => event } },
          },
        },
        classify: {
          invoke: {
            id: "classify",
            src: "llm.classify",
            input: ({ context }): Input<"llm.classify"> => ({
              kind: "classify",
              model: "gpt-4o-mini",
              text: asText(context.lastMessage ?? ""),
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
                target: "small_talk",
                guard: { type: "classifyDoneToSmallTalk", params: ({ event }) => event.output },
                actions: { type: "setIntent", params: ({ event }) => event.output },
              },
              { target: "extract_order_id", actions: { type: "setIntent", params: ({ event }) => event.output } },
            ],
            onError: {
              target: "#order-support.failed",
              actions: { type: "setError", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
        extract_order_id: {
          invoke: {
            id: "extract_order_id",
            src: "llm.extract",
            input: ({ context }): Input<"llm.extract"> => ({
              kind: "extract",
              model: "gpt-4o-mini",
              text: asText(context.lastMessage ?? ""),
              fields: { orderId: { type: "string", optional: true } },
              scripted: { patterns: { orderId: "\\b([A-Z][0-9]{4})\\b" } },
            }),
            onDone: [
              {
                target: "ask_order_id",
                guard: { type: "extractOrderIdDoneToAskOrderId", params: ({ event }) => event.output },
              },
              { target: "resolve_user", actions: { type: "setOrderId", params: ({ event }) => event.output } },
            ],
            onError: "ask_order_id",
          },
        },
        ask_order_id: {
          tags: ["waiting"],
          entry: "askOrderIdEntry",
          on: {
            USER_MESSAGE: {
              target: "extract_order_id",
              actions: { type: "setLastMessage", params: ({ event }) => event },
            },
          },
        },
        resolve_user: {
          invoke: {
            id: "resolve_user",
            src: "tool.resolve_user",
            input: ({ context }): Input<"tool.resolve_user"> => ({ args: toolArgs.resolve_user(context) }),
            onDone: { target: "fetch_order", actions: { type: "setCustomer", params: ({ event }) => event.output } },
            onError: {
              target: "#order-support.failed",
              actions: { type: "setError", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
        fetch_order: {
          invoke: {
            id: "fetch_order",
            src: "tool.query_order",
            input: ({ context }): Input<"tool.query_order"> => ({ args: toolArgs.fetch_order(context) }),
            onDone: [
              {
                target: "await_approval",
                guard: "fetchOrderDoneToAwaitApproval",
                actions: { type: "setOrder", params: ({ event }) => event.output },
              },
              {
                target: "trace_shipment",
                guard: { type: "fetchOrderDoneToTraceShipment", params: ({ event }) => event.output },
                actions: { type: "setOrder", params: ({ event }) => event.output },
              },
              { target: "compose_reply", actions: { type: "setOrder", params: ({ event }) => event.output } },
            ],
            onError: [
              {
                target: "order_not_found",
                guard: { type: "fetchOrderErrorToOrderNotFound", params: ({ event }) => toFlowError(event.error) },
              },
              {
                target: "#order-support.failed",
                actions: { type: "setError", params: ({ event }) => toFlowError(event.error) },
              },
            ],
          },
        },
        order_not_found: {
          tags: ["waiting"],
          entry: "orderNotFoundEntry",
          on: {
            USER_MESSAGE: {
              target: "extract_order_id",
              actions: { type: "setLastMessage", params: ({ event }) => event },
            },
          },
        },
        trace_shipment: {
          invoke: {
            id: "trace_shipment",
            src: "tool.trace_shipment",
            input: ({ context }): Input<"tool.trace_shipment"> => ({ args: toolArgs.trace_shipment(context) }),
            onDone: { target: "compose_reply", actions: { type: "setShipment", params: ({ event }) => event.output } },
            onError: "compose_reply",
          },
        },
        compose_reply: {
          invoke: {
            id: "compose_reply",
            src: "llm.generate",
            input: ({ context }): Input<"llm.generate"> => ({
              kind: "generate",
              model: "gpt-4o",
              system: "You are a concise support agent. Answer only from the facts given.",
              prompt:
                "Customer " + asText(context.customer?.name) + " asked: " + asText(context.lastMessage) + "\nOrder " +
                asText(context.orderId) + " status: " + asText(context.order?.status) + "\nShipment: " +
                asText(context.shipment?.carrier) + " at " + asText(context.shipment?.location) + ", arriving " +
                asText(context.shipment?.eta),
              scripted: {
                reply:
                  "Order " + asText(context.orderId) + " is " + asText(context.order?.status) + ". " +
                  asText(context.shipment?.location) + " " + asText(context.shipment?.eta),
              },
            }),
            onDone: { target: "idle", actions: { type: "setReply", params: ({ event }) => event.output } },
            onError: {
              target: "#order-support.failed",
              actions: { type: "setError", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
        await_approval: {
          description: "A person approves or rejects the refund of the whole order total.",
          tags: ["approval"],
          entry: "awaitApprovalEntry",
          on: {
            APPROVE: "refund",
            REJECT: { target: "idle", actions: { type: "awaitApprovalRejectToIdle", params: ({ event }) => event } },
          },
        },
        refund: {
          invoke: {
            id: "refund",
            src: "tool.issue_refund",
            input: ({ context }): Input<"tool.issue_refund"> => ({ args: toolArgs.refund(context) }),
            onDone: { target: "idle", actions: { type: "setRefundIdAndReply", params: ({ event }) => event.output } },
            onError: {
              target: "#order-support.failed",
              actions: { type: "setError", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
        small_talk: {
          invoke: {
            id: "small_talk",
            src: "llm.generate",
            input: ({ context }): Input<"llm.generate"> => ({
              kind: "generate",
              model: "gpt-4o",
              prompt: "Reply briefly and offer help with orders: " + asText(context.lastMessage),
              scripted: { reply: "I can help with orders and refunds. Tell me your order number." },
            }),
            onDone: { target: "idle", actions: { type: "setReply", params: ({ event }) => event.output } },
            onError: {
              target: "#order-support.failed",
              actions: { type: "setError", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
      },
    },
    failed: { type: "final", description: "A call failed in a way the flow does not handle." },
    cancelled: { type: "final" },
  },
});

/** The machine with its tools and run-time contract, for `createRuntime({ machines: [orderSupport] })`. */
export const orderSupport = defineMachine<typeof orderSupportMachine, OrderSupportEvent>({
  id: "order-support",
  specHash: "33c75c8cad13493d9721b4ee953c539607e248e718a3853ed4f031dab30de20b",
  machine: orderSupportMachine,
  tools: orderSupportTools,
  contextFields: {
    userId: { type: "string" },
    lastMessage: { type: "string", optional: true },
    intent: { type: "enum", optional: true, values: ["order_query", "refund", "other"] },
    orderId: { type: "string", optional: true },
    customer: {
      type: "object",
      optional: true,
      fields: {
        id: { type: "string" },
        name: { type: "string" },
        tier: { type: "enum", values: ["standard", "gold"] },
      },
    },
    order: {
      type: "object",
      optional: true,
      fields: {
        order_id: { type: "string" },
        status: { type: "enum", values: ["processing", "shipped", "delivered"] },
        total: { type: "number" },
        tracking_number: { type: "string", optional: true },
      },
    },
    shipment: {
      type: "object",
      optional: true,
      fields: { carrier: { type: "string" }, location: { type: "string" }, eta: { type: "string" } },
    },
    refundId: { type: "string", optional: true },
    reply: { type: "string", optional: true },
    error: { type: "string", optional: true },
  },
  eventFields: {
    USER_MESSAGE: { text: { type: "string" } },
    APPROVE: {},
    REJECT: { reason: { type: "string", optional: true } },
    CANCEL: {},
  },
  invokes: {
    classify: { llm: "classify" },
    extract_order_id: { llm: "extract" },
    resolve_user: { tool: "resolve_user", args: toolArgs.resolve_user },
    fetch_order: { tool: "query_order", args: toolArgs.fetch_order, retries: 2 },
    trace_shipment: { tool: "trace_shipment", args: toolArgs.trace_shipment },
    compose_reply: { llm: "generate" },
    refund: { tool: "issue_refund", args: toolArgs.refund },
    small_talk: { llm: "generate" },
  },
});
