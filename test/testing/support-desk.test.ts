import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMemoryStore, createRuntime, createScriptedProvider, type LlmProvider, type RuntimeEvent } from '@flowing/runtime';
import { testCase } from '@flowing/runtime/testing';
import { supportBilling } from '../../machines/support-billing/support-billing.machine.ts';
import { supportDesk } from '../../machines/support-desk/support-desk.machine.ts';
import { supportOrders } from '../../machines/support-orders/support-orders.machine.ts';
import { createCodegen } from '../../codegen/index.ts';
import { cliArgs } from '../helpers/cli.ts';
import { copyProject, editJsonFile, REPO_DIR } from '../helpers/project.ts';
import { countingTools } from '../helpers/runtime-counting.ts';

const run = promisify(execFile);
const MACHINES = [supportDesk, supportOrders, supportBilling] as const;

async function flowing(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, cliArgs(...args), { cwd, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The scripted provider, counting the model calls it answers (every kind, whichever session asks). */
function countingModel(): { llm: LlmProvider; calls: () => number } {
  const scripted = createScriptedProvider();
  let calls = 0;
  const count =
    <K extends 'classify' | 'extract' | 'generate' | 'agent'>(kind: K) =>
    (...args: Parameters<LlmProvider[K]>) => {
      calls++;
      return (scripted[kind] as (...a: typeof args) => ReturnType<LlmProvider[K]>)(...args);
    };
  return {
    llm: { ...scripted, classify: count('classify'), extract: count('extract'), generate: count('generate'), agent: count('agent') },
    calls: () => calls,
  };
}

const data = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

describe('support-desk: a triage desk with child sessions, a channel message, an approval and a budget', () => {
  it('runs four user turns offline: each hop a child session, the held charge reaches billing once, the refund waits for a person and is paid once', async () => {
    const { tools, counts } = countingTools({ ...supportDesk.tools, ...supportOrders.tools, ...supportBilling.tools });
    const model = countingModel();
    const runtime = createRuntime({ machines: [...MACHINES], store: createMemoryStore(), tools, llm: model.llm });
    const desk = await runtime.createSession(supportDesk);
    const perTurn: number[] = [];
    const say = async (text: string) => {
      const before = model.calls();
      const result = await desk.send({ type: 'USER_MESSAGE', text });
      perTurn.push(model.calls() - before);
      return result;
    };

    expect(await say('Hello, how long does shipping take?')).toMatchObject({ applied: true, state: { active: 'idle' } });
    expect(await say('Where is my order A1002?')).toMatchObject({ applied: true, state: { active: 'idle' } });
    expect((await desk.snapshot()).context).toMatchObject({ orderId: 'A1002', route: 'orders', reply: 'Order A1002 is processing.  ' });

    // The orders desk found the charge held and told billing: one message, one session for the order, applied once.
    const ledgerId = 'support-billing--A1002';
    await vi.waitFor(async () => expect((await runtime.session(ledgerId).snapshot()).context).toMatchObject({ heldTotal: 120 }));
    const ledger = await runtime.session(ledgerId).events();
    expect(data(ledger, 'channel.received')).toEqual([expect.objectContaining({ channel: 'billing.need_order' })]);
    const ordersChild = data(await desk.events(), 'machine.done').find((d) => d.machine === 'support-orders')!.childId as string;
    const sent = data(await runtime.session(ordersChild).events(), 'channel.sent');
    expect(sent).toEqual([expect.objectContaining({ channel: 'billing.need_order', to: ledgerId })]);
    expect((await runtime.session(ordersChild).snapshot()).invokedBy).toMatchObject({ sessionId: desk.id, state: 'orders' });
    // The conversation goes along: the child got the chat so far, the handoff's call and result closing it.
    const handed = (await runtime.session(ordersChild).snapshot()).context as { conversation: Array<Record<string, any>> };
    expect(handed.conversation.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'Hello, how long does shipping take?',
      'Where is my order A1002?',
    ]);
    const transfer = handed.conversation.findLast((m) => m.role === 'assistant')!;
    expect(transfer.toolCalls?.map((c: { name: string }) => c.name)).toEqual(['transfer_to_orders']);
    expect(handed.conversation.at(-1)).toMatchObject({ role: 'tool', toolCallId: transfer.toolCalls[0].id });

    // A refund: the billing child proposes it and waits for a person; the desk shows what it waits for.
    expect(await say('It was charged but never shipped, refund it please')).toMatchObject({ applied: true });
    const waiting = await desk.snapshot();
    expect(waiting.status).toBe('waiting');
    expect(waiting.waitingOn).toMatchObject({ machineId: 'support-billing', approval: { tool: 'issue_refund' } });
    expect(counts.issue_refund).toBe(0);
    // Approved through the desk's id: the child pays once, the desk goes on with the child's output.
    expect(await desk.send({ type: 'APPROVE' })).toMatchObject({ applied: true, forwardedTo: waiting.waitingOn!.sessionId });
    await vi.waitFor(async () => expect((await desk.snapshot()).state).toEqual({ active: 'idle' }));
    expect(counts.issue_refund).toBe(1);
    expect((await desk.snapshot()).context).toMatchObject({ refundId: expect.stringMatching(/^R-A1002-/) });

    expect(await say('Thanks, that is all')).toMatchObject({ applied: true, state: { active: 'idle' } });
    // Each hop is the triage agent's handoff, an edge of the graph: one model call, then the child's state.
    const handoffs = data(await desk.events(), 'llm.completed').map((d) => d.handoff?.to ?? null);
    expect(handoffs).toEqual([null, 'orders', 'billing', null]);
    // Model calls per turn (the triage agent, which answers or hands off, then what the child makes): the bench prints the same.
    expect(perTurn).toEqual([1, 3, 2, 1]);
  });

  it('replays every recorded case of the three machines with no difference and no real call', async () => {
    for (const machine of MACHINES) {
      const dir = join(REPO_DIR, 'machines', machine.id, 'cases');
      const files = (await readdir(dir)).filter((f) => f.endsWith('.case.jsonl'));
      expect(files.length, machine.id).toBeGreaterThan(0);
      const { tools, counts } = countingTools(machine.tools);
      for (const file of files) {
        const result = await testCase({ ...machine, tools } as never, join(dir, file));
        expect(result.report, `${machine.id}/${file}`).toEqual([]);
      }
      expect(Object.values(counts).every((n) => n === 0)).toBe(true);
    }
  });

  it('generated code is up to date with the three specs', async () => {
    const codegen = createCodegen({ rootDir: REPO_DIR });
    try {
      for (const machine of MACHINES) {
        const result = await codegen.generate(join(REPO_DIR, 'machines', machine.id, `${machine.id}.flow.json`), {
          write: false,
          typeCheck: false,
        });
        expect(
          result.problems.filter((p) => p.severity === 'error'),
          machine.id,
        ).toEqual([]);
        expect(
          result.files.filter((f) => f.changed).map((f) => f.path),
          machine.id,
        ).toEqual([]);
      }
    } finally {
      codegen.dispose();
    }
  }, 120_000);
});

describe('support-desk through the CLI (a copy of the project)', () => {
  let project: Awaited<ReturnType<typeof copyProject>>;
  beforeAll(async () => {
    project = await copyProject('flowing-support-desk-');
  });
  afterAll(async () => {
    await project?.remove();
  });

  it('flowing test support-desk: every path and case passes, 100% of states and transitions', async () => {
    const result = await flowing(project.dir, 'test', 'support-desk');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /✓ support-desk\n {2}paths: (\d+)\/\1 passed\n {2}cases: 2\/2 passed\n {2}coverage: states 6\/6, transitions 10\/10\n {4}paths: states 6\/6, transitions 10\/10\n/,
    );
  }, 120_000);

  it('flowing run support-desk --message runs offline with its child machines loaded', async () => {
    const result = await flowing(project.dir, 'run', 'support-desk', '--message', 'Where is my order A1001?');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/machine\.done +\{"callId":"orders@\d+","machine":"support-orders"/);
    expect(result.stdout).toMatch(/session \S+ waiting/);
  }, 120_000);

  it('the budget holds: validate passes, and fails naming the path once the budget is one call lower', async () => {
    const ok = await flowing(project.dir, 'validate', 'machines/support-desk/support-desk.flow.json');
    expect(ok.code).toBe(0);
    const cost = JSON.parse((await flowing(project.dir, 'cost', 'support-desk', '--json')).stdout) as {
      machines: Array<{ maximum: { turn: { modelCalls: number } } }>;
    };
    const bound = cost.machines[0]!.maximum.turn.modelCalls;
    await editJsonFile(join(project.dir, 'machines/support-desk/support-desk.flow.json'), (spec) => {
      spec.budget.modelCalls = bound - 1;
    });
    const over = await flowing(project.dir, 'validate', 'machines/support-desk/support-desk.flow.json');
    expect(over.code).toBe(1);
    expect(over.stdout).toMatch(
      /support-desk\.flow\.json#\/states\/active\/states\/\w+\/invoke SPEC_BUDGET_EXCEEDED the turn on USER_MESSAGE from 'idle'/,
    );
  }, 120_000);
});
