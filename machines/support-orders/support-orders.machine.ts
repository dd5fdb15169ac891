// Generated from support-orders.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:57d2399fd3f6eb62ce5d85d356f08a2b0ad26179ca45df6cc131a09667c90725 generator:flowing@0.1.0
import { assign, emit, setup, type InputFrom, type OutputFrom } from "xstate";
import { asText, defineMachine, fromLlm, fromTool, toFlowError, type FlowError, type ConversationMessage } from "@flowing/runtime";
import { supportOrdersTools } from "./support-orders.registry.js";

export interface SupportOrdersContext {
  userId: string;
  message: string;
  conversation: ConversationMessage[];
  orderId?: string;
  customer?: { id: string; name: string; tier: "standard" | "gold" };
  order?: {
    order_id: string;
    status: "processing" | "shipped" | "delivered";
    total: number;
    tracking_number?: string;
  };
  shipment?: { carrier: string; location: string; eta: string };
  reply?: string;
  error?: string;
}

export type SupportOrdersEvent = { type: never };

export type SupportOrdersInput = Partial<SupportOrdersContext>;

export interface SupportOrdersOutput {
  reply: string;
  orderId?: string;
}

const actors = {
  "tool.query_order": fromTool(supportOrdersTools.query_order),
  "tool.resolve_user": fromTool(supportOrdersTools.resolve_user),
  "tool.trace_shipment": fromTool(supportOrdersTools.trace_shipment),
  "llm.extract": fromLlm<{ orderId?: string }>("extract"),
  "llm.generate": fromLlm("generate"),
};
type Input<TActor extends keyof typeof actors> = InputFrom<(typeof actors)[TActor]>;
type Output<TActor extends keyof typeof actors> = OutputFrom<(typeof actors)[TActor]>;

/** The arguments of each tool call, by state: what the invoke passes, and what an approval shows before it runs. */
const toolArgs = {
  resolve_user: (context: SupportOrdersContext): Input<"tool.resolve_user">["args"] => ({ user_id: context.userId }),
  fetch_order: (context: SupportOrdersContext): Input<"tool.query_order">["args"] => ({
    order_id: context.orderId ?? "",
    customer_id: context.customer?.id ?? "",
  }),
  trace_shipment: (context: SupportOrdersContext): Input<"tool.trace_shipment">["args"] => ({
    tracking_number: context.order?.tracking_number ?? "",
  }),
};

export const supportOrdersMachine = setup({
  types: {} as { context: SupportOrdersContext; events: SupportOrdersEvent; input: SupportOrdersInput | undefined; output: SupportOrdersOutput },
  actors,
  guards: {
    // output.orderId == undefined
    extractOrderIdDoneToNoOrderId: (_, output: Output<"llm.extract">) => output.orderId === undefined,
    // output.status == 'processing'
    fetchOrderDoneToComposeReply: (_, output: Output<"tool.query_order">) => output.status === "processing",
    // output.status == 'shipped'
    fetchOrderDoneToTraceShipment: (_, output: Output<"tool.query_order">) => output.status === "shipped",
    // error.code == 'ORDER_NOT_FOUND'
    fetchOrderErrorToNotFound: (_, error: FlowError) => error.code === "ORDER_NOT_FOUND",
  },
  actions: {
    setOrderId: assign({ orderId: (_, output: Output<"llm.extract">) => output.orderId }),
    setCustomer: assign({ customer: (_, output: Output<"tool.resolve_user">) => output }),
    setError: assign({ error: (_, error: FlowError) => error.code }),
    emitBillingNeedOrder: emit((_, output: Output<"tool.query_order">) => ({
      type: "flowing.channel",
      channel: "billing.need_order",
      key: String(output.order_id),
      data: { orderId: output.order_id, total: output.total, status: output.status },
    })),
    setOrder: assign({ order: (_, output: Output<"tool.query_order">) => output }),
    setShipment: assign({ shipment: (_, output: Output<"tool.trace_shipment">) => output }),
    setReply: assign({ reply: (_, output: Output<"llm.generate">) => output.text }),
  },
}).createMachine({
  id: "support-orders",
  description:
    "The orders desk of support-desk: looks an order up and answers where it " +
    "is; tells billing about an order whose charge is held.",
  context: ({ input }) => ({ userId: "guest", message: "", conversation: [], ...input }),
  initial: "extract_order_id",
  states: {
    extract_order_id: {
      invoke: {
        id: "extract_order_id",
        src: "llm.extract",
        input: ({ context }): Input<"llm.extract"> => ({
          kind: "extract",
          model: "gpt-4o-mini",
          text: asText(context.message),
          fields: { orderId: { type: "string", optional: true } },
          maxTokens: 50,
          scripted: { patterns: { orderId: "\\b([A-Z][0-9]{4})\\b" } },
        }),
        onDone: [
          {
            target: "no_order_id",
            guard: { type: "extractOrderIdDoneToNoOrderId", params: ({ event }) => event.output },
          },
          { target: "resolve_user", actions: { type: "setOrderId", params: ({ event }) => event.output } },
        ],
        onError: "no_order_id",
      },
    },
    resolve_user: {
      invoke: {
        id: "resolve_user",
        src: "tool.resolve_user",
        input: ({ context }): Input<"tool.resolve_user"> => ({ args: toolArgs.resolve_user(context) }),
        onDone: { target: "fetch_order", actions: { type: "setCustomer", params: ({ event }) => event.output } },
        onError: { target: "failed", actions: { type: "setError", params: ({ event }) => toFlowError(event.error) } },
      },
    },
    fetch_order: {
      invoke: {
        id: "fetch_order",
        src: "tool.query_order",
        input: ({ context }): Input<"tool.query_order"> => ({ args: toolArgs.fetch_order(context) }),
        onDone: [
          {
            target: "compose_reply",
            guard: { type: "fetchOrderDoneToComposeReply", params: ({ event }) => event.output },
            actions: [
              { type: "setOrder", params: ({ event }) => event.output },
              { type: "emitBillingNeedOrder", params: ({ event }) => event.output },
            ],
            description: "The charge is taken but nothing has shipped: billing reviews it.",
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
            target: "not_found",
            guard: { type: "fetchOrderErrorToNotFound", params: ({ event }) => toFlowError(event.error) },
          },
          { target: "failed", actions: { type: "setError", params: ({ event }) => toFlowError(event.error) } },
        ],
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
          history: context.conversation,
          system: "You are the orders desk. Answer in one or two sentences, only from the " + "facts given.",
          prompt:
            "Customer " + asText(context.customer?.name) + " asked: " + asText(context.message) + "\nOrder " +
            asText(context.orderId) + ": " + asText(context.order?.status) + ", total " +
            asText(context.order?.total) + "\nShipment: " + asText(context.shipment?.carrier) + " at " +
            asText(context.shipment?.location) + ", arriving " + asText(context.shipment?.eta),
          maxTokens: 300,
          scripted: {
            reply:
              "Order " + asText(context.orderId) + " is " + asText(context.order?.status) + ". " +
              asText(context.shipment?.location) + " " + asText(context.shipment?.eta),
          },
        }),
        onDone: { target: "answered", actions: { type: "setReply", params: ({ event }) => event.output } },
        onError: { target: "failed", actions: { type: "setError", params: ({ event }) => toFlowError(event.error) } },
      },
    },
    answered: {
      type: "final",
      output: ({ context }): SupportOrdersOutput => ({ reply: context.reply ?? "", orderId: context.orderId }),
    },
    no_order_id: {
      type: "final",
      output: (): SupportOrdersOutput => ({
        reply: "Which order is it about? Please send the order number, e.g. A1001.",
      }),
    },
    not_found: {
      type: "final",
      output: ({ context }): SupportOrdersOutput => ({
        reply: "I could not find order " + (context.orderId ?? "") + ". Please check the number.",
      }),
    },
    failed: {
      type: "final",
      output: ({ context }): SupportOrdersOutput => ({
        reply: "The orders desk could not answer (" + (context.error ?? "unknown") + ").",
      }),
    },
  },
  output: ({ event }) => event.output as SupportOrdersOutput,
});

/** The machine with its tools and run-time contract, for `createRuntime({ machines: [supportOrders] })`. */
export const supportOrders = defineMachine<typeof supportOrdersMachine, SupportOrdersEvent>({
  id: "support-orders",
  specHash: "57d2399fd3f6eb62ce5d85d356f08a2b0ad26179ca45df6cc131a09667c90725",
  machine: supportOrdersMachine,
  tools: supportOrdersTools,
  contextFields: {
    userId: { type: "string" },
    message: { type: "string" },
    conversation: { type: "conversation" },
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
    reply: { type: "string", optional: true },
    error: { type: "string", optional: true },
  },
  eventFields: {},
  invokes: {
    extract_order_id: { llm: "extract" },
    resolve_user: { tool: "resolve_user", args: toolArgs.resolve_user },
    fetch_order: { tool: "query_order", args: toolArgs.fetch_order, retries: 2 },
    trace_shipment: { tool: "trace_shipment", args: toolArgs.trace_shipment },
    compose_reply: { llm: "generate" },
  },
});
