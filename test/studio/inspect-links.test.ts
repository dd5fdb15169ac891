import { describe, expect, it } from 'vitest';
import type { RuntimeEvent, RuntimeMachine, SessionSummary } from '../../protocol/index.ts';
import { childRuns, indexAtTime, messageMatch, runsAt } from '../../studio/src/inspect/links/child-runs.ts';
import { descendantMachines, nestingDepths, nestSessions } from '../../studio/src/inspect/links/session-tree.ts';

const summary = (sessionId: string, machineId: string, parentId?: string): SessionSummary => ({
  sessionId,
  machineId,
  status: 'waiting',
  version: 1,
  seq: 1,
  createdAt: 0,
  updatedAt: 0,
  awaitingApproval: false,
  ...(parentId ? { parentId } : {}),
});

const event = (seq: number, at: number, type: RuntimeEvent['type'], data: Record<string, unknown> = {}): RuntimeEvent => ({
  seq,
  sessionId: 's',
  traceId: 't',
  at,
  type,
  data,
});

describe('child sessions in the sessions list', () => {
  it('puts each child right under its own parent, drops children of sessions not shown, keeps orphans of the list at the top', () => {
    const listed = [summary('d2', 'desk'), summary('d1', 'desk')];
    const children = [
      summary('d1_b_2', 'billing', 'd1'),
      summary('x_b_2', 'billing', 'x'),
      summary('d2_b_2', 'billing', 'd2'),
      summary('d2_b_2_c_1', 'card', 'd2_b_2'),
    ];
    const nested = nestSessions(listed, children);
    expect(nested.map((s) => s.sessionId)).toEqual(['d2', 'd2_b_2', 'd2_b_2_c_1', 'd1', 'd1_b_2']);
    expect(nestingDepths(nested)).toEqual([0, 1, 2, 0, 1]);
    // Every machine's sessions in one list: a listed child is nested, a child whose parent is not listed stays on top.
    const all = [summary('b9', 'billing', 'gone'), summary('d1_b_2', 'billing', 'd1'), summary('d1', 'desk')];
    expect(nestSessions(all).map((s) => [s.sessionId, s.parentId])).toEqual([
      ['b9', 'gone'],
      ['d1', undefined],
      ['d1_b_2', 'd1'],
    ]);
    expect(nestingDepths(nestSessions(all))).toEqual([0, 0, 1]);
  });

  it('lists the machines a machine invokes, transitively, from the served specs', () => {
    const spec = (id: string, child?: string) =>
      ({
        id,
        specHash: 'h',
        events: [],
        spec: { id, states: child ? { s: { invoke: { machine: child } } } : { s: {} } },
      }) as RuntimeMachine;
    const machines = [spec('desk', 'billing'), spec('billing', 'card'), spec('card', 'desk'), spec('other')];
    expect(descendantMachines('desk', machines)).toEqual(['billing', 'card']);
    expect(descendantMachines('other', machines)).toEqual([]);
    expect(descendantMachines('unknown', machines)).toEqual([]);
  });
});

describe('where a child ran in its parent, and the links between sessions', () => {
  const parent = [
    event(1, 100, 'session.started'),
    event(2, 100, 'machine.started', { childId: 'c', machine: 'billing', callId: 'billing@2' }),
    event(3, 110, 'machine.waiting', { childId: 'c', machine: 'billing', callId: 'billing@2' }),
    event(4, 200, 'machine.done', { childId: 'c', machine: 'billing', callId: 'billing@2' }),
    event(5, 200, 'session.done'),
  ];

  it('gives the range of the log each child ran over, and whether it runs at a step', () => {
    const [run] = childRuns(parent);
    expect(run).toEqual({ childId: 'c', machine: 'billing', callId: 'billing@2', start: 1, end: 3, outcome: 'done' });
    expect([0, 1, 2, 3, 4].map((i) => runsAt(run!, i))).toEqual([false, true, true, true, false]);
    expect(childRuns(parent.slice(0, 3))[0]).toMatchObject({ end: undefined, outcome: 'running' });
  });

  it("finds the child's step at the parent's time: its last event logged at or before it", () => {
    const child = [
      event(1, 100, 'session.started'),
      event(2, 105, 'state.changed'),
      event(3, 200, 'state.changed'),
      event(4, 200, 'session.done'),
    ];
    expect(indexAtTime(child, 110)).toBe(1);
    expect(indexAtTime(child, 200)).toBe(3);
    expect(indexAtTime(child, 50)).toBe(0);
  });

  it('matches the two log lines of one channel message', () => {
    expect(messageMatch(event(3, 1, 'channel.sent', { messageId: 'm1', to: 'ledger_A1' }))).toEqual({
      sessionId: 'ledger_A1',
      type: 'channel.received',
      messageId: 'm1',
    });
    expect(messageMatch(event(2, 1, 'channel.received', { messageId: 'm1', from: 'desk-1' }))).toEqual({
      sessionId: 'desk-1',
      type: 'channel.sent',
      messageId: 'm1',
    });
    expect(messageMatch(event(2, 1, 'channel.failed', { messageId: 'm1' }))).toBeUndefined();
  });
});
