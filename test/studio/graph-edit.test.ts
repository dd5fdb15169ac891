import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listStates, transitionSites, validateSpec, type FlowSpec } from '../../spec/index.ts';
import {
  addState,
  addTransition,
  deleteState,
  deleteTransition,
  moveState,
  renameState,
  specToGraph,
  updateTransition,
  elementForProblem,
} from '../../studio/src/graph/index.ts';

const example = (id: string) =>
  JSON.parse(readFileSync(new URL(`../../machines/${id}/${id}.flow.json`, import.meta.url), 'utf8')) as FlowSpec;

function targets(spec: FlowSpec): string[] {
  return listStates(spec).flatMap((s) => transitionSites(s.spec).flatMap((site) => site.transitions.map((t) => t.transition.target ?? '')));
}

describe('renaming a state', () => {
  it('updates every transition target, the parent initial and the layout keys', () => {
    const spec = {
      ...example('order-support'),
      layout: { active: { x: 0, y: 0, width: 900, height: 600 }, 'active.idle': { x: 10, y: 20 }, failed: { x: 5, y: 5 } },
    };
    const before = targets(spec).filter((t) => t === 'idle').length;
    expect(before).toBeGreaterThan(2);
    const result = renameState(spec, '/states/active/states/idle', 'waiting_for_user');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const next = result.spec;
    expect(targets(next).filter((t) => t === 'idle')).toEqual([]);
    expect(targets(next).filter((t) => t === 'waiting_for_user')).toHaveLength(before);
    expect(next.states.active!.initial).toBe('waiting_for_user');
    expect(Object.keys(next.states.active!.states!)[0]).toBe('waiting_for_user');
    expect(next.layout).toEqual({
      active: { x: 0, y: 0, width: 900, height: 600 },
      'active.waiting_for_user': { x: 10, y: 20 },
      failed: { x: 5, y: 5 },
    });
    expect(result.pointer).toBe('/states/active/states/waiting_for_user');
    expect(validateSpec(next).problems.filter((p) => p.severity === 'error')).toEqual([]);
  });

  it('renames a compound state, the machine initial and the layout keys of its children', () => {
    const spec = { ...example('order-support'), layout: { active: { x: 0, y: 0 }, 'active.idle': { x: 10, y: 20 } } };
    const result = renameState(spec, '/states/active', 'conversation');
    expect(result.ok && result.spec.initial).toBe('conversation');
    expect(result.ok && Object.keys(result.spec.layout!)).toEqual(['conversation', 'conversation.idle']);
  });

  it('keeps the written form of each transition (string stays string, object stays object)', () => {
    const spec = example('order-support');
    const result = renameState(spec, '/states/failed', 'broken');
    if (!result.ok) throw new Error(result.message);
    const extract = result.spec.states.active!.states!.ask_order_id!;
    expect(extract.on!.USER_MESSAGE).toEqual({ target: 'extract_order_id', assign: { lastMessage: 'event.text' } });
    expect(result.spec.states.active!.states!.resolve_user!.invoke!.onError).toEqual({ target: 'broken', assign: { error: 'error.code' } });
    expect(result.spec.states.active!.states!.trace_shipment!.invoke!.onError).toBe('compose_reply');
  });

  it('refuses a name that is not an identifier or is taken, with a code', () => {
    const spec = example('order-support');
    expect(renameState(spec, '/states/failed', '2fast')).toMatchObject({ ok: false, code: 'GRAPH_INVALID_NAME' });
    expect(renameState(spec, '/states/failed', 'constructor')).toMatchObject({ ok: false, code: 'GRAPH_INVALID_NAME' });
    expect(renameState(spec, '/states/failed', 'idle')).toMatchObject({ ok: false, code: 'GRAPH_DUPLICATE_NAME' });
  });
});

describe('moving a state into and out of a compound state', () => {
  it('moves a top-level state into a compound state and back out, keeping the layout in step', () => {
    const spec = { ...example('order-support'), layout: { failed: { x: 700, y: 0 } } };
    const into = moveState(spec, '/states/failed', '/states/active', { x: 40, y: 50 });
    if (!into.ok) throw new Error(into.message);
    expect(into.spec.states.failed).toBeUndefined();
    expect(into.spec.states.active!.states!.failed).toEqual({
      type: 'final',
      description: 'A call failed in a way the flow does not handle.',
    });
    expect(into.spec.layout).toEqual({ 'active.failed': { x: 40, y: 50 } });
    expect(into.pointer).toBe('/states/active/states/failed');
    const out = moveState(into.spec, '/states/active/states/failed', undefined, { x: 900, y: 10 });
    if (!out.ok) throw new Error(out.message);
    expect(out.spec.states.failed).toBeDefined();
    expect(out.spec.layout).toEqual({ failed: { x: 900, y: 10 } });
  });

  it('gives the old parent a new initial state when its initial child moves out', () => {
    const spec = example('order-support');
    const result = moveState(spec, '/states/active/states/idle', undefined, { x: 0, y: 0 });
    if (!result.ok) throw new Error(result.message);
    expect(result.spec.states.active!.initial).toBe('classify');
  });

  it('refuses to move a state into itself, its child, or an atomic state', () => {
    const spec = example('order-support');
    expect(moveState(spec, '/states/active', '/states/active/states/idle', { x: 0, y: 0 })).toMatchObject({
      ok: false,
      code: 'GRAPH_BAD_MOVE',
    });
    expect(moveState(spec, '/states/failed', '/states/cancelled', { x: 0, y: 0 })).toMatchObject({ ok: false, code: 'GRAPH_BAD_MOVE' });
  });
});

describe('adding and deleting', () => {
  it('adds a state, connects it with a new (declared) event and keeps the spec valid', () => {
    const spec = example('order-support');
    const added = addState(spec, { name: 'check_status', position: { x: 1200, y: 40 } });
    if (!added.ok) throw new Error(added.message);
    expect(added.spec.layout).toEqual({ check_status: { x: 1200, y: 40 } });
    const linked = addTransition(added.spec, '/states/check_status', { kind: 'on', event: 'CHECK' }, { target: 'idle' });
    if (!linked.ok) throw new Error(linked.message);
    expect(linked.spec.states.check_status!.on).toEqual({ CHECK: 'idle' });
    expect(linked.spec.events.CHECK).toEqual({});
    const second = addTransition(
      linked.spec,
      '/states/check_status',
      { kind: 'on', event: 'CHECK' },
      { target: 'failed', guard: 'context.orderId == undefined' },
    );
    if (!second.ok) throw new Error(second.message);
    expect(second.spec.states.check_status!.on!.CHECK).toEqual([
      { target: 'idle' },
      { target: 'failed', guard: 'context.orderId == undefined' },
    ]);
    expect(second.pointer).toBe('/states/check_status/on/CHECK/1');
    const edges = specToGraph(second.spec).edges.filter((e) => e.data.sourceName === 'check_status');
    expect(edges.map((e) => e.data.label)).toEqual(['CHECK', 'CHECK [context.orderId == undefined]']);
  });

  it('turns a bare target into an object when a guard is added, and back when it is removed', () => {
    const spec = example('order-support');
    const guarded = updateTransition(spec, '/states/active/states/await_approval/on/APPROVE', { guard: 'context.order.total < 100' });
    if (!guarded.ok) throw new Error(guarded.message);
    expect(guarded.spec.states.active!.states!.await_approval!.on!.APPROVE).toEqual({
      target: 'refund',
      guard: 'context.order.total < 100',
    });
    const plain = updateTransition(guarded.spec, '/states/active/states/await_approval/on/APPROVE', { guard: undefined });
    expect(plain.ok && plain.spec.states.active!.states!.await_approval!.on!.APPROVE).toBe('refund');
  });

  it('deletes a state with the transitions into it and its layout entries', () => {
    const spec = { ...example('order-support'), layout: { 'active.small_talk': { x: 1, y: 1 } } };
    const result = deleteState(spec, '/states/active/states/small_talk');
    if (!result.ok) throw new Error(result.message);
    expect(targets(result.spec)).not.toContain('small_talk');
    expect(result.spec.states.active!.states!.classify!.invoke!.onDone).toEqual([
      { target: 'extract_order_id', assign: { intent: 'output.label' } },
    ]);
    expect(result.spec.layout).toEqual({});
  });

  it('deletes one transition of a guarded list and an emptied event map', () => {
    const spec = example('order-support');
    const graph = specToGraph(spec);
    const edge = graph.edges.find((e) => e.id === '/states/active/states/fetch_order/invoke/onError/0')!;
    const result = deleteTransition(spec, edge.data);
    expect(result.ok && result.spec.states.active!.states!.fetch_order!.invoke!.onError).toEqual([
      { target: 'failed', assign: { error: 'error.code' } },
    ]);
    const idleEdge = graph.edges.find((e) => e.data.sourceName === 'idle')!;
    const noOn = deleteTransition(spec, idleEdge.data);
    expect(noOn.ok && noOn.spec.states.active!.states!.idle!.on).toBeUndefined();
  });
});

describe('problems on graph elements', () => {
  it('maps a problem pointer to the deepest transition or state that contains it', () => {
    const graph = specToGraph(example('order-support'));
    expect(elementForProblem(graph, '/states/active/states/fetch_order/invoke/onDone/0/guard')).toEqual({
      kind: 'transition',
      id: '/states/active/states/fetch_order/invoke/onDone/0',
    });
    expect(elementForProblem(graph, '/states/active/states/fetch_order/invoke/input/order_id')).toEqual({
      kind: 'state',
      id: '/states/active/states/fetch_order',
    });
    expect(elementForProblem(graph, '/states/active/states/idle/on/USER_MESSAGE/assign/lastMessage')).toEqual({
      kind: 'transition',
      id: '/states/active/states/idle/on/USER_MESSAGE',
    });
    expect(elementForProblem(graph, '/context/orderId')).toEqual({ kind: 'machine' });
  });
});
