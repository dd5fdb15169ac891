import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { testCase } from '@flowing/runtime/testing';
import { REPO_DIR } from '../helpers/project.ts';
import { editedMachine, totalCalls, withCountingTools, type EditedMachine } from './edited-machine.ts';

const CASES = join(REPO_DIR, 'machines/order-support/cases');
const made: EditedMachine[] = [];
afterAll(async () => {
  for (const m of made) await m.remove();
});

async function edited(edit: (spec: any) => void) {
  const m = await editedMachine('order-support', edit);
  made.push(m);
  return withCountingTools(m.machine);
}

/** Renames a state in a spec: its key and every transition target naming it. */
function renameState(spec: any, from: string, to: string) {
  const visit = (states: Record<string, any>) => {
    for (const key of Object.keys(states)) {
      const state = states[key];
      const retarget = (t: any): any =>
        typeof t === 'string'
          ? t === from
            ? to
            : t
          : Array.isArray(t)
            ? t.map(retarget)
            : t && typeof t === 'object'
              ? { ...t, ...(t.target === from ? { target: to } : {}) }
              : t;
      for (const event of Object.keys(state.on ?? {})) state.on[event] = retarget(state.on[event]);
      if (state.invoke?.onDone) state.invoke.onDone = retarget(state.invoke.onDone);
      if (state.invoke?.onError) state.invoke.onError = retarget(state.invoke.onError);
      if (state.states) visit(state.states);
      if (state.initial === from) state.initial = to;
    }
    if (from in states) {
      const entries = Object.entries(states).map(([k, v]) => [k === from ? to : k, v]);
      for (const k of Object.keys(states)) delete states[k];
      Object.assign(states, Object.fromEntries(entries));
    }
  };
  visit(spec.states);
  if (spec.layout?.[from]) spec.layout[to] = spec.layout[from];
}

describe('replaying recorded cases against an edited copy of order-support', () => {
  it('passes every recorded case against the unchanged machine, with zero real tool calls', async () => {
    const { machine, calls } = await edited(() => {});
    for (const name of ['order-query', 'refund-approved', 'refund-rejected', 'not-found']) {
      const result = await testCase(machine, join(CASES, `${name}.case.jsonl`));
      expect(result.report, name).toEqual([]);
    }
    expect(totalCalls(calls)).toBe(0);
  }, 120_000);

  it('a changed guard threshold sends the case down the other branch, and the diff shows where', async () => {
    // The shipped branch now needs a total above 100; order A1001 (59.90, shipped) is answered without a trace.
    const { machine, calls } = await edited((spec) => {
      spec.states.active.states.fetch_order.invoke.onDone[1].guard = "output.status == 'shipped' && output.total > 100";
    });
    const result = await testCase(machine, join(CASES, 'order-query.case.jsonl'));
    expect(result.ok).toBe(false);
    expect(result.diff.first).toMatch(/^step \d+: recorded state active\.trace_shipment, now state active\.compose_reply$/);
    expect(result.diff.states.old).toContain('active.trace_shipment');
    expect(result.diff.states.new).not.toContain('active.trace_shipment');
    expect(result.diff.toolCalls.old.map((c) => c.tool)).toEqual(['resolve_user', 'query_order', 'trace_shipment']);
    expect(result.diff.toolCalls.new.map((c) => c.tool)).toEqual(['resolve_user', 'query_order']);
    expect(result.diff.unused.map((c) => c.name)).toEqual(['trace_shipment']);
    expect(result.report.join('\n')).toContain('state path:');
    expect(totalCalls(calls)).toBe(0);
  }, 120_000);

  it('a renamed state changes the state path by that name only', async () => {
    const { machine, calls } = await edited((spec) => renameState(spec, 'fetch_order', 'lookup_order'));
    const result = await testCase(machine, join(CASES, 'refund-approved.case.jsonl'));
    expect(result.ok).toBe(false);
    expect(result.diff.renamed).toEqual({ fetch_order: 'lookup_order' });
    expect(result.diff.states.new).toEqual(result.diff.states.old.map((s) => s.replace('fetch_order', 'lookup_order')));
    expect(result.diff.toolCalls.new).toEqual(result.diff.toolCalls.old);
    expect(result.diff.context).toEqual([]);
    expect(result.report.join('\n')).toContain('differs by state names only: fetch_order -> lookup_order');
    expect(result.report).toContainEqual(expect.stringMatching(/^ {2}! active\.fetch_order +\| active\.lookup_order$/));
    expect(totalCalls(calls)).toBe(0);
  }, 120_000);

  it('an added tool call is reported as missing from the recording and never made', async () => {
    // After the trace, the order is looked up a second time: the recording has one query_order result only.
    const { machine, calls } = await edited((spec) => {
      const states = spec.states.active.states;
      states.trace_shipment.invoke.onDone.target = 'recheck_order';
      states.recheck_order = {
        invoke: {
          tool: 'query_order',
          input: { order_id: "context.orderId ?? ''", customer_id: "context.customer.id ?? ''" },
          onDone: { target: 'compose_reply', assign: { order: 'output' } },
          onError: { target: 'compose_reply' },
        },
      };
    });
    const result = await testCase(machine, join(CASES, 'order-query.case.jsonl'));
    expect(result.ok).toBe(false);
    expect(result.diff.missing).toEqual([{ call: 'tool', name: 'query_order', input: { order_id: 'A1001', customer_id: 'c-100' } }]);
    expect(result.diff.first).toContain("calls tool 'query_order'");
    expect(result.diff.toolCalls.new.map((c) => c.tool)).toEqual(['resolve_user', 'query_order', 'trace_shipment', 'query_order']);
    expect(result.report.join('\n')).toContain('REPLAY_MISSING_CALL, not made');
    // The side-by-side view lines the timelines up: the added state and call stand alone on the new side.
    expect(result.report).toContainEqual(expect.stringMatching(/^ {2}\+ {60}\| active\.recheck_order$/));
    expect(result.report).toContainEqual(expect.stringMatching(/^ {2}\+ {60}\| query_order \{"customer_id":"c-100","order_id":"A1001"\}$/));
    expect(calls.query_order).toBe(0);
    expect(totalCalls(calls)).toBe(0);
  }, 120_000);

  it('a removed assign leaves the final context different', async () => {
    const { machine, calls } = await edited((spec) => {
      delete spec.states.active.states.trace_shipment.invoke.onDone.assign;
    });
    const result = await testCase(machine, join(CASES, 'order-query.case.jsonl'));
    expect(result.ok).toBe(false);
    expect(result.diff.context.map((c) => c.key)).toEqual(['shipment']);
    expect(result.diff.context[0]!.new).toBeUndefined();
    expect(result.diff.states.new).toEqual(result.diff.states.old);
    expect(result.diff.first).toMatch(/^final context\.shipment: recorded \{.*\}, now undefined$/);
    expect(totalCalls(calls)).toBe(0);
  }, 120_000);
});
