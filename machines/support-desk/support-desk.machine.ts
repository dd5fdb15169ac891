// Generated from support-desk.flow.json by flowing codegen — do not edit.
// Change the spec and run `flowing codegen`. spec sha256:04da13c96de0adc6b37b70b0570dc4c42eedf642172e89c821a97a8cfa5e8053 generator:flowing@0.1.0
import { assign, setup, type InputFrom, type OutputFrom } from "xstate";
import { appendMessage, defineMachine, fromLlm, fromMachine, toFlowError, type FlowError, type ConversationMessage } from "@flowing/runtime";
import { supportDeskTools } from "./support-desk.registry.js";
import type { SupportBillingInput, SupportBillingOutput } from "../support-billing/support-billing.machine.js";
import type { SupportOrdersInput, SupportOrdersOutput } from "../support-orders/support-orders.machine.js";

export interface SupportDeskContext {
  userId: string;
  conversation: ConversationMessage[];
  lastMessage?: string;
  route?: "orders" | "billing" | "answer";
  orderId?: string;
  refundId?: string;
  reply?: string;
  error?: string;
  handoffReason?: string;
}

export type SupportDeskEvent =
  | { type: "USER_MESSAGE"; text: string }
  | { type: "APPROVE" }
  | { type: "REJECT"; reason?: string }
  | { type: "CANCEL" };

export type SupportDeskInput = Partial<SupportDeskContext>;

type EventOf<TType extends SupportDeskEvent["type"]> = Extract<SupportDeskEvent, { type: TType }>;

const actors = {
  "llm.agent": fromLlm<"orders" | "billing">("agent"),
  "machine.support-billing": fromMachine<SupportBillingInput, SupportBillingOutput>("support-billing"),
  "machine.support-orders": fromMachine<SupportOrdersInput, SupportOrdersOutput>("support-orders"),
};
type Input<TActor extends keyof typeof actors> = InputFrom<(typeof actors)[TActor]>;
type Output<TActor extends keyof typeof actors> = OutputFrom<(typeof actors)[TActor]>;

export const supportDeskMachine = setup({
  types: {} as { context: SupportDeskContext; events: SupportDeskEvent; input: SupportDeskInput | undefined },
  actors,
  guards: {
    // output.handoff != undefined && output.handoff.to == 'billing'
    triageDoneToBilling: (_, output: Output<"llm.agent">) => output.handoff !== undefined && output.handoff?.to === "billing",
    // output.handoff != undefined && output.handoff.to == 'orders'
    triageDoneToOrders: (_, output: Output<"llm.agent">) => output.handoff !== undefined && output.handoff?.to === "orders",
  },
  actions: {
    // lastMessage = event.text; conversation = append(context.conversation, event.text)
    setLastMessageAndConversation: assign({
      lastMessage: (_, event: EventOf<"USER_MESSAGE">) => event.text,
      conversation: ({ context }, event: EventOf<"USER_MESSAGE">) => appendMessage(context.conversation, event.text),
    }),
    appendConversation: assign({
      conversation: ({ context }, output: Output<"llm.agent">) => [...context.conversation, ...(output.messages ?? [])],
    }),
    // route = 'answer'; reply = output.text
    setRouteAndReply: assign({ route: () => "answer", reply: (_, output: Output<"llm.agent">) => output.text }),
    // route = 'billing'; handoffReason = output.handoff.reason
    triageDoneToBilling: assign({
      route: () => "billing",
      handoffReason: (_, output: Output<"llm.agent">) => output.handoff?.reason,
    }),
    // route = 'orders'; handoffReason = output.handoff.reason
    triageDoneToOrders: assign({
      route: () => "orders",
      handoffReason: (_, output: Output<"llm.agent">) => output.handoff?.reason,
    }),
    // error = error.code; reply = 'Sorry, the desk cannot answer right now.'
    triageErrorToIdle: assign({
      error: (_, error: FlowError) => error.code,
      reply: () => "Sorry, the desk cannot answer right now.",
    }),
    // error = error.code; reply = 'The orders desk is not available right now.'
    ordersErrorToIdle: assign({
      error: (_, error: FlowError) => error.code,
      reply: () => "The orders desk is not available right now.",
    }),
    setReplyAndOrderId: assign({
      reply: (_, output: Output<"machine.support-orders">) => output.reply,
      orderId: ({ context }, output: Output<"machine.support-orders">) => output.orderId ?? context.orderId,
    }),
    // error = error.code; reply = 'The billing desk is not available right now.'
    billingErrorToIdle: assign({
      error: (_, error: FlowError) => error.code,
      reply: () => "The billing desk is not available right now.",
    }),
    setReplyAndOrderIdAndRefundId: assign({
      reply: (_, output: Output<"machine.support-billing">) => output.reply,
      orderId: ({ context }, output: Output<"machine.support-billing">) => output.orderId ?? context.orderId,
      refundId: ({ context }, output: Output<"machine.support-billing">) => output.refundId ?? context.refundId,
    }),
  },
}).createMachine({
  id: "support-desk",
  description:
    "A support desk: a triage agent answers what it can and hands orders " +
    "questions to support-orders and refunds to support-billing (child " +
    "sessions, one edge per handoff); a refund waits for a person's approval.",
  context: ({ input }) => ({ userId: "guest", conversation: [], ...input }),
  initial: "active",
  states: {
    active: {
      description:
        "The conversation; CANCEL ends it from anywhere inside (a running child " + "session is cancelled with it).",
      initial: "idle",
      on: { CANCEL: "cancelled" },
      states: {
        idle: {
          tags: ["waiting"],
          on: {
            USER_MESSAGE: {
              target: "triage",
              actions: { type: "setLastMessageAndConversation", params: ({ event }) => event },
            },
          },
        },
        triage: {
          invoke: {
            id: "triage",
            src: "llm.agent",
            input: ({ context }): Input<"llm.agent"> => ({
              kind: "agent",
              model: "gpt-4o-mini",
              history: context.conversation,
              system:
                "You are the triage agent of a shop's support desk. Answer general " +
                "questions yourself in one or two sentences, with the FAQ. Hand questions " +
                "about where an order is to the orders desk, and refunds and charges to " + "the billing desk.",
              prompt: "",
              maxTokens: 300,
              tools: ["faq_lookup"],
              maxIterations: 2,
              handoffs: ["orders", "billing"],
              scripted: {
                reply: "I can help with orders, deliveries and refunds.",
                handoffs: {
                  orders: ["where is", "track", "parcel", "status of"],
                  billing: ["refund it", "refund for", "refund please", "money back", "charged"],
                },
              },
            }),
            onDone: [
              {
                target: "orders",
                guard: { type: "triageDoneToOrders", params: ({ event }) => event.output },
                actions: [
                  { type: "appendConversation", params: ({ event }) => event.output },
                  { type: "triageDoneToOrders", params: ({ event }) => event.output },
                ],
              },
              {
                target: "billing",
                guard: { type: "triageDoneToBilling", params: ({ event }) => event.output },
                actions: [
                  { type: "appendConversation", params: ({ event }) => event.output },
                  { type: "triageDoneToBilling", params: ({ event }) => event.output },
                ],
              },
              {
                target: "idle",
                actions: [
                  { type: "appendConversation", params: ({ event }) => event.output },
                  { type: "setRouteAndReply", params: ({ event }) => event.output },
                ],
              },
            ],
            onError: {
              target: "idle",
              actions: { type: "triageErrorToIdle", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
        orders: {
          invoke: {
            id: "orders",
            src: "machine.support-orders",
            input: ({ context }): Input<"machine.support-orders"> => ({
              userId: context.userId,
              message: context.lastMessage ?? "",
              conversation: context.conversation,
            }),
            onDone: { target: "idle", actions: { type: "setReplyAndOrderId", params: ({ event }) => event.output } },
            onError: {
              target: "idle",
              actions: { type: "ordersErrorToIdle", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
        billing: {
          invoke: {
            id: "billing",
            src: "machine.support-billing",
            input: ({ context }): Input<"machine.support-billing"> => ({
              userId: context.userId,
              message: context.lastMessage ?? "",
              orderId: context.orderId,
              conversation: context.conversation,
            }),
            onDone: {
              target: "idle",
              actions: { type: "setReplyAndOrderIdAndRefundId", params: ({ event }) => event.output },
            },
            onError: {
              target: "idle",
              actions: { type: "billingErrorToIdle", params: ({ event }) => toFlowError(event.error) },
            },
          },
        },
      },
    },
    cancelled: { type: "final" },
  },
});

/** The machine with its tools and run-time contract, for `createRuntime({ machines: [supportDesk] })`. */
export const supportDesk = defineMachine<typeof supportDeskMachine, SupportDeskEvent>({
  id: "support-desk",
  specHash: "04da13c96de0adc6b37b70b0570dc4c42eedf642172e89c821a97a8cfa5e8053",
  machine: supportDeskMachine,
  tools: supportDeskTools,
  contextFields: {
    userId: { type: "string" },
    conversation: { type: "conversation" },
    lastMessage: { type: "string", optional: true },
    route: { type: "enum", optional: true, values: ["orders", "billing", "answer"] },
    orderId: { type: "string", optional: true },
    refundId: { type: "string", optional: true },
    reply: { type: "string", optional: true },
    error: { type: "string", optional: true },
    handoffReason: { type: "string", optional: true },
  },
  eventFields: {
    USER_MESSAGE: { text: { type: "string" } },
    APPROVE: {},
    REJECT: { reason: { type: "string", optional: true } },
    CANCEL: {},
  },
  invokes: {
    triage: { llm: "agent" },
    orders: { machine: "support-orders" },
    billing: { machine: "support-billing" },
  },
});
