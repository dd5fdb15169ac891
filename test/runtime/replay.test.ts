import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRecordedCalls,
  createRuntime,
  defineTool,
  reexecuteSession,
  replaySession,
  ToolError,
  type AnyMachineDefinition,
  type Clock,
  type LlmProvider,
  type RuntimeEvent,
} from '@flowing/runtime';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { z } from 'zod';
import { createVirtualClock } from '@flowing/runtime';
import { countingTools } from '../helpers/runtime-counting.ts';
import { agentMachine } from '../helpers/runtime-machines.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

async function sqliteStore(): Promise<SqliteStore> {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-replay-'));
  const store = createSqliteStore({ file: join(dir, 'sessions.db') });
  cleanup.push(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return store;
}

/** order-support with tools that count every real run. */
function countedOrderSupport(): { machine: AnyMachineDefinition; counts: Record<string, number> } {
  const { tools, counts } = countingTools(orderSupport.tools);
  return { machine: { ...orderSupport, tools } as AnyMachineDefinition, counts };
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** A refund session recorded on SQLite: an order question (tools + model), then a refund approved and paid. */
async function recordRefundSession(clock: Clock = createVirtualClock()) {
  const store = await sqliteStore();
  const recording = countedOrderSupport();
  const runtime = createRuntime({ machines: [recording.machine], store, clock });
  const session = await runtime.createSession(recording.machine, { userId: 'u-ada' }, { sessionId: 'refund-1', traceId: 'trace-1' });
  await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
  await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
  await session.send({ type: 'APPROVE' });
  return {
    store,
    session,
    counts: recording.counts,
    log: await store.readEvents(session.id, 0),
    journal: await store.readJournal(session.id),
    snapshot: await session.snapshot(),
  };
}

describe('replaySession: no side effects', () => {
  it('replays a refund session with zero tool runs and a byte-identical log and snapshot', async () => {
    const recorded = await recordRefundSession();
    expect(recorded.counts.issue_refund).toBe(1);
    expect(recorded.log.some((e) => e.type === 'tool.completed' && e.data.tool === 'issue_refund')).toBe(true);
    const replaying = countedOrderSupport();
    const replayed = await replaySession({
      machine: replaying.machine,
      log: recorded.log,
      journal: recorded.journal,
      clock: createVirtualClock(),
    });
    expect(total(replaying.counts)).toBe(0);
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(recorded.log));
    expect(JSON.stringify(replayed.snapshot)).toBe(JSON.stringify(recorded.snapshot));
    const toolStarts = recorded.log.filter((e) => e.type === 'tool.started').length;
    expect(replayed.answered).toEqual({ tools: toolStarts, llm: recorded.log.filter((e) => e.type === 'llm.started').length });
  });

  it('refuses a session whose refund arguments differ from the recording with REPLAY_MISSING_CALL, paying nothing', async () => {
    const recorded = await recordRefundSession();
    // The recording says the refund was for another amount: the machine asks for a call the recording lacks.
    const tampered = recorded.log.map((e) =>
      e.type === 'tool.started' && e.data.tool === 'issue_refund'
        ? { ...e, data: { ...e.data, args: { ...(e.data.args as object), amount: 1 } } }
        : e,
    );
    const replaying = countedOrderSupport();
    const failure = await replaySession({ machine: replaying.machine, log: tampered, clock: createVirtualClock() }).catch(
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({
      code: 'REPLAY_MISSING_CALL',
      details: { kind: 'tool', name: 'issue_refund', state: 'refund', argsHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect((failure as Error).message).toMatch(/tool 'issue_refund' in state 'refund'/);
    expect(total(replaying.counts)).toBe(0);
  });

  it("replays a forked session from its parent's log: the edited refund answered from the fork's recording, nothing run", async () => {
    const recorded = await recordRefundSession();
    const live = countedOrderSupport();
    const runtime = createRuntime({ machines: [live.machine], store: recorded.store, clock: createVirtualClock() });
    const parentLog = await runtime.store.readEvents(recorded.session.id, 0);
    const waitSeq = parentLog.filter((e) => e.type === 'approval.requested').at(-1)!.seq;
    const fork = await runtime.forkSession(recorded.session.id, waitSeq, {
      context: { order: { order_id: 'A1002', status: 'processing', total: 9 } },
    });
    await fork.send({ type: 'APPROVE' });
    expect(live.counts.issue_refund).toBe(1);
    const forkLog = await fork.events();
    const replaying = countedOrderSupport();
    const replayed = await replaySession({ machine: replaying.machine, log: forkLog, parentLog, clock: createVirtualClock() });
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(forkLog));
    expect(total(replaying.counts)).toBe(0);
    await expect(replaySession({ machine: replaying.machine, log: forkLog, clock: createVirtualClock() })).rejects.toMatchObject({
      code: 'REPLAY_FORK_NEEDS_PARENT',
      details: { parentId: recorded.session.id },
    });
  });

  it('reexecuteSession is the one that runs the tools again (documented, counted)', async () => {
    const recorded = await recordRefundSession();
    const again = countedOrderSupport();
    await reexecuteSession({ machine: again.machine, log: recorded.log, clock: createVirtualClock() });
    expect(again.counts.issue_refund).toBe(1);
  });
});

describe('createRecordedCalls', () => {
  it("answers a missing tool call with REPLAY_MISSING_CALL as the call's error, never with a real run", async () => {
    const recorded = await recordRefundSession();
    // A recording cut before the refund was paid.
    const refundStart = recorded.log.find((e) => e.type === 'tool.started' && e.data.tool === 'issue_refund')!;
    const cut = recorded.log.filter((e) => e.seq < refundStart.seq);
    const live = countedOrderSupport();
    const calls = createRecordedCalls({ log: cut, machine: live.machine });
    const runtime = createRuntime({ machines: [live.machine], tools: calls.tools, llm: calls.llm, clock: createVirtualClock() });
    const session = await runtime.createSession(live.machine, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
    await session.send({ type: 'APPROVE' });
    expect(total(live.counts)).toBe(0);
    const failed = (await session.events()).find((e) => e.type === 'tool.failed')!;
    expect(failed.data).toMatchObject({ tool: 'issue_refund', error: { code: 'REPLAY_MISSING_CALL' } });
    expect(calls.misses.map((m) => m.details)).toEqual([expect.objectContaining({ kind: 'tool', name: 'issue_refund', state: 'refund' })]);
  });

  it('answers a model call the recording lacks with REPLAY_MISSING_CALL naming the kind and state', async () => {
    const recorded = await recordRefundSession();
    const live = countedOrderSupport();
    const calls = createRecordedCalls({ log: recorded.log, machine: live.machine });
    const runtime = createRuntime({ machines: [live.machine], tools: calls.tools, llm: calls.llm, clock: createVirtualClock() });
    const session = await runtime.createSession(live.machine, { userId: 'u-ada' });
    // A message never recorded: its classify request hashes differently.
    await session.send({ type: 'USER_MESSAGE', text: 'hello there, nice weather' });
    expect(calls.misses[0]).toMatchObject({ code: 'REPLAY_MISSING_CALL', details: { kind: 'llm', name: 'classify', state: 'classify' } });
    expect((await session.events()).find((e) => e.type === 'llm.failed')!.data).toMatchObject({
      kind: 'classify',
      error: { code: 'REPLAY_MISSING_CALL' },
    });
    expect(total(live.counts)).toBe(0);
  });

  it('answers a call asked twice with the same arguments by occurrence, and a third time not at all', async () => {
    const live = countedOrderSupport();
    const log: RuntimeEvent[] = [];
    const ev = (type: RuntimeEvent['type'], data: Record<string, unknown>) =>
      log.push({ seq: log.length + 1, sessionId: 's', traceId: 't', at: 0, type, data });
    const args = { order_id: 'A1001', customer_id: 'c-1' };
    ev('session.started', { machineId: 'order-support' });
    ev('tool.started', { callId: 'fetch_order@3', tool: 'query_order', args });
    ev('tool.completed', { callId: 'fetch_order@3', tool: 'query_order', output: { order_id: 'A1001', status: 'shipped', total: 1 } });
    ev('tool.started', { callId: 'fetch_order@9', tool: 'query_order', args });
    ev('tool.completed', { callId: 'fetch_order@9', tool: 'query_order', output: { order_id: 'A1001', status: 'delivered', total: 1 } });
    const calls = createRecordedCalls({ log, machine: live.machine });
    const run = (key: string) =>
      calls.tools.query_order!.run(args, { signal: new AbortController().signal, idempotencyKey: key, log: () => {} });
    await expect(run('s:fetch_order@3')).resolves.toMatchObject({ status: 'shipped' });
    await expect(run('s:fetch_order@9')).resolves.toMatchObject({ status: 'delivered' });
    await expect(run('s:fetch_order@12')).rejects.toMatchObject({ code: 'REPLAY_MISSING_CALL', details: { state: 'fetch_order' } });
    expect(total(live.counts)).toBe(0);
  });

  it('plays retried attempts again: the same retry events, the same result, no run', async () => {
    // Frozen time with real timers: the backoff waits for real (briefly), the timestamps stay comparable.
    const clock: Clock = {
      now: () => 5_000_000,
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
    };
    let failures = 1;
    const flaky = defineTool({
      ...orderSupport.tools.query_order!,
      async run(input, context) {
        if (failures-- > 0) throw new ToolError('TOOL_FAILED', 'the order service hiccuped');
        return orderSupport.tools.query_order!.run(input, context);
      },
    });
    const machine = { ...orderSupport, tools: { ...orderSupport.tools, query_order: flaky } } as AnyMachineDefinition;
    const runtime = createRuntime({ machines: [machine], clock, limits: { retryBaseMs: 1, retryMaxMs: 2 }, random: () => 0 });
    const session = await runtime.createSession(machine, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
    const log = await session.events();
    expect(log.filter((e) => e.type === 'tool.retry')).toHaveLength(1);
    const replaying = countedOrderSupport();
    const replayed = await replaySession({
      machine: replaying.machine,
      log,
      clock,
      limits: { retryBaseMs: 1, retryMaxMs: 2 },
      random: () => 0,
    });
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(log));
    expect(total(replaying.counts)).toBe(0);
  });

  it('plays an agent again: its steps and its tool calls, answered from the recording, with no model and no tool run', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'looks a word up',
      input: z.object({ word: z.string() }),
      output: z.object({ meaning: z.string() }),
      idempotent: true,
      async run({ word }) {
        return { meaning: `${word} means ${word.length}` };
      },
    });
    // A stand-in model whose agent asks for one tool call per iteration, as a real one would.
    const agentModel = (calls: { n: number }): LlmProvider => {
      const fail = () => Promise.reject(new Error('not used'));
      return {
        name: 'stand-in',
        isModel: true,
        classify: fail,
        extract: fail,
        generate: fail,
        async agent(request, options) {
          calls.n++;
          options.onStep?.({ iteration: 1, toolCalls: [{ id: 'c1', name: 'lookup', args: { word: request.prompt } }] });
          const answer = await options.callTool!('lookup', { word: request.prompt });
          return {
            output: { text: JSON.stringify(answer), steps: 1 },
            model: 'stand-in-1',
            usage: { promptTokens: 10, completionTokens: 5 },
            attempts: 1,
          };
        },
      };
    };
    const recordingCalls = { n: 0 };
    const recordingTools = countingTools({ lookup: lookup as never });
    const machine = agentMachine([recordingTools.tools.lookup!]) as AnyMachineDefinition;
    const runtime = createRuntime({ machines: [machine], llm: agentModel(recordingCalls), clock: createVirtualClock() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', text: 'flow' });
    const log = await session.events();
    expect(recordingCalls.n).toBe(1);
    expect(recordingTools.counts.lookup).toBe(1);
    const replayTools = countingTools({ lookup: lookup as never });
    const replayed = await replaySession({
      machine: agentMachine([replayTools.tools.lookup!]) as AnyMachineDefinition,
      log,
      clock: createVirtualClock(),
    });
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(log));
    expect(replayTools.counts.lookup).toBe(0);
    expect(replayed.answered).toEqual({ tools: 1, llm: 1 });
  });
});

describe('replay and the version a log was recorded under', () => {
  it('refuses a log recorded under another version of the machine with REPLAY_VERSION_MISMATCH naming both', async () => {
    const { log } = await recordRefundSession();
    const other = { ...orderSupport, specHash: 'f'.repeat(64) };
    await expect(replaySession({ machine: other, log })).rejects.toMatchObject({
      code: 'REPLAY_VERSION_MISMATCH',
      details: { recordedVersion: orderSupport.specHash, machineVersion: other.specHash },
    });
  });

  it('refuses a log carried onto another version midway, naming the seq of session.migrated', async () => {
    const store = await sqliteStore();
    const before = createRuntime({ machines: [orderSupport], store, warmSessions: 0 });
    const session = await before.createSession(orderSupport);
    const next = { ...orderSupport, specHash: 'e'.repeat(64) };
    const after = createRuntime({ machines: [next], store });
    await after.session(session.id).send({ type: 'USER_MESSAGE', text: 'hello' });
    const log = await store.readEvents(session.id, 0);
    const migrated = log.find((e) => e.type === 'session.migrated')!;
    await expect(
      replaySession({ machine: next, log: [{ ...log[0]!, data: { ...log[0]!.data, specHash: next.specHash } }, ...log.slice(1)] }),
    ).rejects.toMatchObject({
      code: 'REPLAY_VERSION_MISMATCH',
      details: { seq: migrated.seq, fromVersion: orderSupport.specHash, toVersion: next.specHash },
    });
  });
});
