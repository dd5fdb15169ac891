import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editJsonFile, useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject();
const SPEC = 'machines/order-support/order-support.flow.json';
const AT = '/states/active/states/assistant/invoke';

/** Adds an `assistant` agent state to order-support, with a bound tool and structured output, edited by `change`. */
async function generateWithAgent(change: (invoke: any) => void = () => {}) {
  const original = await readFile(join(project.dir, SPEC), 'utf8');
  await editJsonFile(join(project.dir, SPEC), (spec: any) => {
    const invoke = {
      llm: 'agent',
      prompt: '{{ context.lastMessage }}',
      tools: ['trace_shipment', { tool: 'query_order', bind: { customer_id: "context.customer.id ?? ''" } }],
      output: {
        intent: { type: 'enum', values: ['order_query', 'refund', 'other'] },
        orderIds: { type: 'array', items: { type: 'string' } },
      },
      temperature: 0.2,
      maxTokens: 300,
      onDone: [
        { guard: "output.intent == 'refund'", target: 'idle', assign: { intent: 'output.intent', orderId: 'output.orderIds[0]' } },
        { target: 'idle' },
      ],
      onError: 'failed',
    };
    change(invoke);
    spec.states.active.states.assistant = { invoke };
  });
  try {
    return await project.codegen.generate(SPEC, { write: false });
  } finally {
    await writeFile(join(project.dir, SPEC), original);
  }
}

const typeErrors = (result: Awaited<ReturnType<typeof generateWithAgent>>) =>
  result.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR');

describe('agent calls in generated code', () => {
  it('types the structured output for onDone guards and assigns, and passes the bound arguments', async () => {
    const result = await generateWithAgent();
    expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const machine = result.files.find((f) => f.path.endsWith('.machine.ts'))!.text;
    expect(machine).toContain('fromLlm<{ intent: "order_query" | "refund" | "other"; orderIds: string[] }>("agent")');
    expect(machine).toContain('} satisfies Pick<ToolInput<typeof orderSupportTools.query_order>, "customer_id">');
    expect(machine).toContain('tools: ["trace_shipment", "query_order"]');
    expect(machine).toContain('temperature: 0.2');
    expect(machine).toContain('maxTokens: 300');
  }, 120_000);

  it('maps a guard on an output field the agent does not have to that guard', async () => {
    const result = await generateWithAgent((invoke) => {
      invoke.onDone[0].guard = "output.intnt == 'refund'";
    });
    expect(typeErrors(result).map((e) => e.path)).toEqual([`${AT}/onDone/0/guard`]);
  }, 120_000);

  it('maps a bound value of the wrong type to that binding', async () => {
    const result = await generateWithAgent((invoke) => {
      invoke.tools[1].bind.customer_id = 'context.order.total ?? 0';
    });
    const errors = typeErrors(result);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e.path.startsWith(`${AT}/tools/1/bind`))).toBe(true);
  }, 120_000);

  it('refuses a binding of a field the tool does not take, naming it', async () => {
    const result = await generateWithAgent((invoke) => {
      invoke.tools[1].bind = { customer: "context.customer.id ?? ''" };
    });
    expect(result.ok).toBe(false);
    expect(result.problems.filter((p) => p.severity === 'error').map((p) => [p.code, p.path])).toEqual([
      ['SPEC_UNKNOWN_TOOL_INPUT', `${AT}/tools/1/bind/customer`],
    ]);
  }, 120_000);
});

describe('agent handoffs in generated code', () => {
  it('types output.handoff.to as the union of the targets: a guard naming another target is a type error at that guard', async () => {
    const result = await generateWithAgent((invoke) => {
      delete invoke.output;
      invoke.handoffs = ['billing', 'refunds'];
      invoke.scripted = { handoffs: { refunds: ['refund'] } };
      invoke.onDone = [
        { guard: "output.handoff.to == 'billing'", target: 'idle', assign: { lastMessage: 'output.handoff.message' } },
        { guard: "output.handoff.to == 'refundz'", target: 'idle' },
        { target: 'idle', assign: { lastMessage: 'output.text' } },
      ];
    });
    const machine = result.files.find((f) => f.path.endsWith('.machine.ts'))!.text;
    expect(machine).toContain('fromLlm<"billing" | "refunds">("agent")');
    expect(machine).toContain('handoffs: ["billing", "refunds"]');
    expect(typeErrors(result).map((e) => e.path)).toEqual([`${AT}/onDone/1/guard`]);
  }, 120_000);

  it('with structured output: the answer fields and the handoff both type-check', async () => {
    const result = await generateWithAgent((invoke) => {
      invoke.handoffs = ['billing'];
      invoke.onDone = [
        { guard: "output.handoff.to == 'billing'", target: 'idle', assign: { lastMessage: 'output.handoff.reason' } },
        { guard: "output.intent == 'refund'", target: 'idle', assign: { intent: 'output.intent', orderId: 'output.orderIds[0]' } },
        { target: 'idle' },
      ];
    });
    expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const machine = result.files.find((f) => f.path.endsWith('.machine.ts'))!.text;
    expect(machine).toContain('fromLlm<{ intent: "order_query" | "refund" | "other"; orderIds: string[] }, "billing">("agent")');
  }, 120_000);
});
