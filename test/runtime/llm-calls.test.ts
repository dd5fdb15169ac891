import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMemoryStore,
  createRuntime,
  createScriptedProvider,
  defineTool,
  type AgentToolCaller,
  type LlmProvider,
  type RuntimeEvent,
} from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { agentMachine } from '../helpers/runtime-machines.ts';
import { createRecordingStore } from '../helpers/runtime-store.ts';
import { within } from '../helpers/wait.ts';

const ofType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);
const usage = (n: number) => ({ promptTokens: n, completionTokens: n });

function provider(overrides: Partial<LlmProvider>): LlmProvider {
  return { ...createScriptedProvider(), ...overrides };
}

describe('extract: validated, repaired at most twice', () => {
  it('repairs an invalid answer by showing the model its output and the problem', async () => {
    const requests: Array<Record<string, any>> = [];
    const llm = provider({
      async extract(request) {
        requests.push(request);
        return { output: requests.length === 1 ? { orderId: 1001 } : { orderId: 'A1001' }, model: 'fake', usage: usage(1), attempts: 1 };
      },
    });
    const runtime = createRuntime({ machines: [orderSupport], llm });
    const session = await runtime.createSession(orderSupport);
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    expect(requests).toHaveLength(2);
    expect(requests[1]!.repair).toMatchObject({ previousOutput: { orderId: 1001 }, problem: expect.stringContaining('orderId') });
    expect((await session.snapshot()).context).toMatchObject({ orderId: 'A1001' });
    expect(ofType(await session.events(), 'llm.completed').find((d) => d.kind === 'extract')).toMatchObject({
      attempts: 2,
      usage: usage(2),
    });
  });

  it('gives up after 2 repairs (3 requests) with LLM_BAD_OUTPUT', async () => {
    let calls = 0;
    const llm = provider({
      async extract() {
        calls++;
        return { output: { orderId: 7 }, model: 'fake', usage: usage(1), attempts: 1 };
      },
    });
    const runtime = createRuntime({ machines: [orderSupport], llm });
    const session = await runtime.createSession(orderSupport);
    const result = await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    expect(calls).toBe(3);
    expect(result).toMatchObject({ applied: true, state: { active: 'ask_order_id' } });
    expect(ofType(await session.events(), 'llm.failed')[0]).toMatchObject({ kind: 'extract', error: { code: 'LLM_BAD_OUTPUT' } });
  });

  it('repairs a classify label that is not one of the labels', async () => {
    let calls = 0;
    const llm = provider({
      async classify() {
        calls++;
        return { output: { label: calls === 1 ? 'shipping' : 'other' }, model: 'fake', usage: usage(1), attempts: 1 };
      },
    });
    const runtime = createRuntime({ machines: [orderSupport], llm });
    const session = await runtime.createSession(orderSupport);
    await session.send({ type: 'USER_MESSAGE', text: 'hello' });
    expect(calls).toBe(2);
    expect((await session.snapshot()).context).toMatchObject({ intent: 'other' });
  });
});

describe('budget and model choice', () => {
  it('refuses model calls once the token budget is spent (BUDGET_EXCEEDED) and records usage on llm.completed', async () => {
    const scripted = createScriptedProvider();
    const llm = provider({
      classify: async (r, o) => ({ ...(await scripted.classify(r, o)), usage: usage(300) }),
      extract: async (r, o) => ({ ...(await scripted.extract(r, o)), usage: usage(300) }),
    });
    const runtime = createRuntime({ machines: [orderSupport], llm, limits: { tokenBudget: 1_000 } });
    const session = await runtime.createSession(orderSupport);
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    const snapshot = await session.snapshot();
    expect(snapshot.usage).toEqual({ promptTokens: 600, completionTokens: 600 });
    expect(snapshot.context).toMatchObject({ error: 'BUDGET_EXCEEDED' });
    const events = await session.events();
    expect(ofType(events, 'llm.completed').map((d) => d.usage)).toEqual([usage(300), usage(300)]);
    expect(ofType(events, 'llm.failed')[0]).toMatchObject({ kind: 'generate', error: { code: 'BUDGET_EXCEEDED' } });
  });

  it('uses the model the spec names for each step, and the configured default otherwise', async () => {
    const models: Array<string | undefined> = [];
    const scripted = createScriptedProvider();
    const llm = provider({
      classify: async (r, o) => {
        models.push(r.model);
        return scripted.classify(r, o);
      },
    });
    const runtime = createRuntime({ machines: [orderSupport], llm, limits: { model: 'fallback-model' } });
    const session = await runtime.createSession(orderSupport);
    await session.send({ type: 'USER_MESSAGE', text: 'hello' });
    expect(models).toEqual(['gpt-4o-mini']);
    const smallTalk = ofType(await session.events(), 'llm.started').find((d) => d.kind === 'generate');
    expect(smallTalk?.model).toBe('gpt-4o');
    const machine = agentMachine([]);
    const other = createRuntime({ machines: [machine], limits: { models: { agent: 'agent-model' }, model: 'fallback-model' } });
    const agentSession = await other.createSession(machine);
    await agentSession.send({ type: 'ASK', text: 'hi' });
    expect(ofType(await agentSession.events(), 'llm.started')[0]?.model).toBe('agent-model');
  });
});

describe('agent: a bounded tool loop through the tool wrapper (B4)', () => {
  function lookupTool() {
    const ran: unknown[] = [];
    const tool = defineTool({
      name: 'lookup',
      description: 'finds a record',
      idempotent: true,
      input: z.object({ id: z.string().max(100) }),
      output: z.object({ found: z.string() }),
      async run(input) {
        ran.push(input);
        return { found: `record ${input.id}` };
      },
    });
    return { tool, ran };
  }

  it('turns malformed calls into tool-error results and runs tools only with valid args', async () => {
    const { tool, ran } = lookupTool();
    const results: unknown[] = [];
    const llm = provider({
      async agent(_request, { callTool, onStep }) {
        const call = callTool as AgentToolCaller;
        onStep?.({ iteration: 1, toolCalls: [{ id: 'c1', name: 'lookup', args: { id: 7 } }] });
        results.push(await call('lookup', { id: 7 }));
        results.push(await call('wipe_disk', {}));
        results.push(await call('lookup', { id: 'x'.repeat(1_000_000) }));
        results.push(await call('lookup', { id: 'A1' }));
        return { output: { text: 'done', steps: 1 }, model: 'fake', usage: usage(1), attempts: 1 };
      },
    });
    const machine = agentMachine([tool]);
    const runtime = createRuntime({ machines: [machine], llm });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'find A1' });
    expect(ran).toEqual([{ id: 'A1' }]);
    expect(results).toMatchObject([
      { ok: false, error: { code: 'TOOL_CONTRACT' } },
      { ok: false, error: { code: 'TOOL_UNKNOWN' } },
      { ok: false, error: { code: 'TOOL_CONTRACT' } },
      { ok: true, output: { found: 'record A1' } },
    ]);
    expect((await session.snapshot()).context).toMatchObject({ answer: 'done' });
    expect(ofType(await session.events(), 'agent.step')).toHaveLength(1);
  });

  it('stops an agent that repeats the same call forever', async () => {
    const { tool, ran } = lookupTool();
    const llm = provider({
      async agent(_request, { callTool }) {
        for (;;) await (callTool as AgentToolCaller)('lookup', { id: 'again' });
      },
    });
    const machine = agentMachine([tool], 3);
    const runtime = createRuntime({ machines: [machine], llm });
    const session = await runtime.createSession(machine);
    const result = await session.send({ type: 'ASK', text: 'loop' });
    expect(result).toMatchObject({ applied: true, state: 'idle' });
    expect((await session.snapshot()).context).toMatchObject({ error: 'STEP_LIMIT' });
    // The cap is 4 tool calls per allowed iteration: exactly 3 × 4 ran, the 13th stopped the loop.
    expect(ran).toHaveLength(3 * 4);
  });

  it('stops an agent that goes past its iterations', async () => {
    const { tool } = lookupTool();
    const llm = provider({
      async agent(_request, { onStep, signal }) {
        for (let i = 1; !signal.aborted; i++) {
          onStep?.({ iteration: i, toolCalls: [] });
          await new Promise((resolve) => setImmediate(resolve));
        }
        throw signal.reason;
      },
    });
    const machine = agentMachine([tool], 2);
    const runtime = createRuntime({ machines: [machine], llm });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'loop' });
    expect((await session.snapshot()).context).toMatchObject({ error: 'LLM_BAD_OUTPUT' });
    expect(ofType(await session.events(), 'agent.step')).toHaveLength(3);
  });

  it('D7: after a crash between a tool call and its result, the resumed agent gets an "interrupted" result for that call', async () => {
    const paid: unknown[] = [];
    const pay = defineTool({
      name: 'pay',
      description: 'moves money',
      idempotent: false,
      input: z.object({ amount: z.number() }),
      output: z.object({ ok: z.boolean() }),
      async run(input) {
        paid.push(input);
        return { ok: true };
      },
    });
    const seen: unknown[] = [];
    const llm = provider({
      async agent(_request, { callTool }) {
        const result = await (callTool as AgentToolCaller)('pay', { amount: 5 });
        seen.push(result);
        return {
          output: { text: result.ok ? 'paid' : `not paid: ${result.error.code}`, steps: 1 },
          model: 'fake',
          usage: usage(1),
          attempts: 1,
        };
      },
    });
    const machine = agentMachine([pay]);
    const { store, dumps } = createRecordingStore();
    const first = createRuntime({ machines: [machine], llm, store });
    const session = await first.createSession(machine);
    await session.send({ type: 'ASK', text: 'pay 5' });
    expect(paid).toHaveLength(1);
    const crash = dumps.find((d) => {
      const e = d.journal.get(session.id)?.get('helping@2/1');
      return e !== undefined && e.completed === undefined;
    });
    expect(crash).toBeDefined();
    seen.length = 0;
    const second = createRuntime({ machines: [machine], llm, store: createMemoryStore({ data: crash! }) });
    await second.resume(session.id);
    expect(paid).toHaveLength(1);
    expect(seen).toEqual([{ ok: false, error: { code: 'TOOL_UNKNOWN_OUTCOME', message: expect.stringContaining('interrupted') } }]);
    expect((await second.session(session.id).snapshot()).context).toMatchObject({ answer: 'not paid: TOOL_UNKNOWN_OUTCOME' });
  });
});

describe('streaming, truncation and step limits', () => {
  it('stops logging deltas when the session is cancelled mid-stream', async () => {
    let aborted = false;
    let returned!: () => void;
    const modelReturned = new Promise<void>((resolve) => (returned = resolve));
    const llm = provider({
      async generate(_request, { signal, onDelta }) {
        try {
          for (let i = 0; i < 1_000 && !signal.aborted; i++) {
            onDelta?.(`piece ${i} `);
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          aborted = signal.aborted;
          throw signal.reason;
        } finally {
          returned();
        }
      },
    });
    const runtime = createRuntime({ machines: [orderSupport], llm });
    const session = await runtime.createSession(orderSupport);
    const running = session.send({ type: 'USER_MESSAGE', text: 'hello' });
    let deltas = 0;
    let streaming!: () => void;
    const threeDeltas = new Promise<void>((resolve) => (streaming = resolve));
    session.subscribe(0, (e) => {
      if (e.type === 'message.delta' && ++deltas === 3) streaming();
    });
    await within(threeDeltas, 5_000, 'three deltas to be logged');
    await session.cancel('stop talking');
    const atCancel = (await session.events()).filter((e) => e.type === 'message.delta').length;
    await running;
    // The model call has returned (its loop saw the abort): every delta it could still send was sent before this.
    await within(modelReturned, 5_000, 'the model call to return');
    expect(aborted).toBe(true);
    expect((await session.events()).filter((e) => e.type === 'message.delta').length).toBe(atCancel);
    expect((await session.snapshot()).status).toBe('cancelled');
  });

  it('cuts a large tool result for the model but keeps the full result in the log', async () => {
    const big = defineTool({
      name: 'dump',
      description: 'returns a lot',
      idempotent: true,
      input: z.object({}),
      output: z.object({ text: z.string() }),
      async run() {
        return { text: 'x'.repeat(5_000) };
      },
    });
    let seen: unknown;
    const llm = provider({
      async agent(_request, { callTool }) {
        seen = await (callTool as AgentToolCaller)('dump', {});
        return { output: { text: 'ok', steps: 1 }, model: 'fake', usage: usage(1), attempts: 1 };
      },
    });
    const machine = agentMachine([big]);
    const runtime = createRuntime({ machines: [machine], llm, limits: { maxToolResultChars: 100 } });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'dump' });
    expect(seen).toMatchObject({ ok: true, output: { truncated: true, totalChars: 5_011 } });
    expect((seen as { output: { preview: string } }).output.preview).toHaveLength(100);
    expect(ofType(await session.events(), 'tool.completed')[0]!.output.text).toHaveLength(5_000);
  });

  it('refuses an event whose turn takes more steps than allowed with STEP_LIMIT and keeps the session', async () => {
    const runtime = createRuntime({ machines: [orderSupport], limits: { stepsPerTurn: 4 } });
    const session = await runtime.createSession(orderSupport);
    const before = await session.snapshot();
    expect(await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' })).toMatchObject({
      applied: false,
      code: 'STEP_LIMIT',
    });
    const snapshot = await session.snapshot();
    expect(snapshot.status).toBe('waiting');
    expect(snapshot.state).toEqual(before.state);
    // A shorter turn (this message is no order question) is taken.
    expect(await session.send({ type: 'USER_MESSAGE', text: 'again' })).toMatchObject({ applied: true });
  });
});
