// Generated from support-billing.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:b15dff23c93fe14f93bc367b7443ce6d44e8eb34c4daa312713cb61b93f16033 generator:flowing@0.1.0
import { assign, setup, type InputFrom, type OutputFrom } from "xstate";
import { asText, defineMachine, fromLlm, fromTool, toFlowError, type FlowError, type ConversationMessage } from "@flowing/runtime";
import { supportBillingTools } from "./support-billing.registry.js";

export interface SupportBillingContext {
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
  proposal?: string;
  refundId?: string;
  heldTotal: number;
  heldStatus?: string;
  reply?: string;
  error?: string;
}

export type SupportBillingEvent =
  | { type: "BILLING_NEED_ORDER"; orderId: string; total: number; status: string }
  | { type: "APPROVE" }
  | { type: "REJECT"; reason?: string };

export type SupportBillingInput = Partial<SupportBillingContext>;

export interface SupportBillingOutput {
  reply: string;
  orderId?: string;
  refundId?: string;
}

type EventOf<TType extends SupportBillingEvent["type"]> = Extract<SupportBillingEvent, { type: TType }>;

const actors = {
  "tool.issue_refund": fromTool(supportBillingTools.issue_refund),
  "tool.query_order": fromTool(supportBillingTools.query_order),
  "tool.resolve_user": fromTool(supportBillingTools.resolve_user),
  "llm.extract": fromLlm<{ orderId?: string }>("extract"),
  "llm.generate": fromLlm("generate"),
};
type Input<TActor extends keyof typeof actors> = InputFrom<(typeof actors)[TActor]>;
type Output<TActor extends keyof typeof actors> = OutputFrom<(typeof actors)[TActor]>;

/** The arguments of each tool call, by state: what the invoke passes, and what an approval shows before it runs. */
const toolArgs = {
  resolve_user: (context: SupportBillingContext): Input<"tool.resolve_user">["args"] => ({ user_id: context.userId }),
  fetch_order: (context: SupportBillingContext): Input<"tool.query_order">["args"] => ({
    order_id: context.orderId ?? "",
    customer_id: context.customer?.id ?? "",
  }),
  refund: (context: SupportBillingContext): Input<"tool.issue_refund">["args"] => ({
    order_id: context.orderId ?? "",
    amount: context.order?.total ?? 0,
  }),
};

export const supportBillingMachine = setup({
  types: {} as { context: SupportBillingContext; events: SupportBillingEvent; input: SupportBillingInput | undefined; output: SupportBillingOutput },
  actors,
  guards: {
    // context.message == ''
    startAlwaysToCharges: ({ context }) => context.message === "",
    // context.orderId != undefined
    startAlwaysToResolveUser: ({ context }) => context.orderId !== undefined,
    // output.orderId == undefined
    extractOrderIdDoneToNoOrderId: (_, output: Output<"llm.extract">) => output.orderId === undefined,
    // error.code == 'ORDER_NOT_FOUND'
    fetchOrderErrorToNotFound: (_, error: FlowError) => error.code === "ORDER_NOT_FOUND",
  },
  actions: {
    setHeldTotalAndHeldStatus: assign({
      heldTotal: (_, event: EventOf<"BILLING_NEED_ORDER">) => event.total,
      heldStatus: (_, event: EventOf<"BILLING_NEED_ORDER">) => event.status,
    }),
    setOrderId: assign({ orderId: (_, output: Output<"llm.extract">) => output.orderId }),
    setCustomer: assign({ customer: (_, output: Output<"tool.resolve_user">) => output }),
    setError: assign({ error: (_, error: FlowError) => error.code }),
    setOrder: assign({ order: (_, output: Output<"tool.query_order">) => output }),
    setProposal: assign({ proposal: (_, output: Output<"llm.generate">) => output.text }),
    // reply = 'The refund was not approved: ' + (event.reason ?? 'no reason given')
    setReply: assign({
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
  id: "support-billing",
  description:
    "The billing desk of support-desk. Invoked with a message, it proposes a " +
    "refund of an order that a person approves; started by a billing.* " +
    "message, it keeps the charges the orders desk reported for one order.",
  context: ({ input }) => ({ userId: "guest", message: "", conversation: [], heldTotal: 0, ...input }),
  initial: "start",
  states: {
    start: {
      description: "A session a billing.* message created has no message: it keeps the order's charges.",
      always: [
        { target: "charges", guard: "startAlwaysToCharges" },
        { target: "resolve_user", guard: "startAlwaysToResolveUser" },
        "extract_order_id",
      ],
    },
    charges: {
      tags: ["waiting"],
      on: {
        BILLING_NEED_ORDER: {
          target: "charges",
          actions: { type: "setHeldTotalAndHeldStatus", params: ({ event }) => event },
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
        onDone: { target: "propose_refund", actions: { type: "setOrder", params: ({ event }) => event.output } },
        onError: [
          {
            target: "not_found",
            guard: { type: "fetchOrderErrorToNotFound", params: ({ event }) => toFlowError(event.error) },
          },
          { target: "failed", actions: { type: "setError", params: ({ event }) => toFlowError(event.error) } },
        ],
      },
    },
    propose_refund: {
      invoke: {
        id: "propose_refund",
        src: "llm.generate",
        input: ({ context }): Input<"llm.generate"> => ({
          kind: "generate",
          model: "gpt-4o",
          history: context.conversation,
          system:
            "You are the billing desk. In one sentence, propose a refund of the order " +
            "total and say why, from the facts given.",
          prompt:
            "Customer " + asText(context.customer?.name) + " wrote: " + asText(context.message) + "\nOrder " +
            asText(context.orderId) + ": " + asText(context.order?.status) + ", total " + asText(context.order?.total),
          maxTokens: 200,
          scripted: {
            reply:
              "Refund " + asText(context.order?.total) + " for order " + asText(context.orderId) + " (" +
              asText(context.order?.status) + ").",
          },
        }),
        onDone: { target: "await_approval", actions: { type: "setProposal", params: ({ event }) => event.output } },
        onError: { target: "failed", actions: { type: "setError", params: ({ event }) => toFlowError(event.error) } },
      },
    },
    await_approval: {
      description: "A person approves or rejects the refund of the whole order total.",
      tags: ["approval"],
      on: {
        APPROVE: "refund",
        REJECT: { target: "declined", actions: { type: "setReply", params: ({ event }) => event } },
      },
    },
    refund: {
      invoke: {
        id: "refund",
        src: "tool.issue_refund",
        input: ({ context }): Input<"tool.issue_refund"> => ({ args: toolArgs.refund(context) }),
        onDone: { target: "refunded", actions: { type: "setRefundIdAndReply", params: ({ event }) => event.output } },
        onError: { target: "failed", actions: { type: "setError", params: ({ event }) => toFlowError(event.error) } },
      },
    },
    refunded: {
      type: "final",
      output: ({ context }): SupportBillingOutput => ({
        reply: context.reply ?? "",
        orderId: context.orderId,
        refundId: context.refundId,
      }),
    },
    declined: {
      type: "final",
      output: ({ context }): SupportBillingOutput => ({ reply: context.reply ?? "", orderId: context.orderId }),
    },
    no_order_id: {
      type: "final",
      output: (): SupportBillingOutput => ({
        reply: "Which order should be refunded? Please send the order number, e.g. A1001.",
      }),
    },
    not_found: {
      type: "final",
      output: ({ context }): SupportBillingOutput => ({
        reply: "I could not find order " + (context.orderId ?? "") + ". Please check the number.",
      }),
    },
    failed: {
      type: "final",
      output: ({ context }): SupportBillingOutput => ({
        reply: "The billing desk could not finish (" + (context.error ?? "unknown") + ").",
      }),
    },
  },
  output: ({ event }) => event.output as SupportBillingOutput,
});

/** The machine with its tools and run-time contract, for `createRuntime({ machines: [supportBilling] })`. */
export const supportBilling = defineMachine<typeof supportBillingMachine, SupportBillingEvent>({
  id: "support-billing",
  specHash: "b15dff23c93fe14f93bc367b7443ce6d44e8eb34c4daa312713cb61b93f16033",
  machine: supportBillingMachine,
  tools: supportBillingTools,
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
    proposal: { type: "string", optional: true },
    refundId: { type: "string", optional: true },
    heldTotal: { type: "number" },
    heldStatus: { type: "string", optional: true },
    reply: { type: "string", optional: true },
    error: { type: "string", optional: true },
  },
  eventFields: {
    BILLING_NEED_ORDER: { orderId: { type: "string" }, total: { type: "number" }, status: { type: "string" } },
    APPROVE: {},
    REJECT: { reason: { type: "string", optional: true } },
  },
  invokes: {
    extract_order_id: { llm: "extract" },
    resolve_user: { tool: "resolve_user", args: toolArgs.resolve_user },
    fetch_order: { tool: "query_order", args: toolArgs.fetch_order, retries: 2 },
    propose_refund: { llm: "generate" },
    refund: { tool: "issue_refund", args: toolArgs.refund },
  },
  channels: { listen: ["billing.*"], key: "orderId" },
});
