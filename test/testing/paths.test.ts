import type { AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { defineMachine, defineTool } from '@flowing/runtime';
import { coverageOf, startTransitions, staticFindings, testPaths } from '@flowing/runtime/testing';
import { FlowSpecSchema, listStates, transitionSites, type FlowSpec } from '@flowing/spec';
import { incidentTriage } from '../../machines/incident-triage/incident-triage.machine.ts';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { supportBilling } from '../../machines/support-billing/support-billing.machine.ts';
import { REPO_DIR } from '../helpers/project.ts';
import { totalCalls, withCountingTools } from './edited-machine.ts';

function specOf(id: string): FlowSpec {
  return FlowSpecSchema.parse(JSON.parse(readFileSync(join(REPO_DIR, 'machines', id, `${id}.flow.json`), 'utf8')));
}

/** States and transition branches as the spec declares them (each branch of a guarded list counts once). */
function specCounts(spec: FlowSpec) {
  const states = listStates(spec);
  const transitions = states.reduce((n, entry) => n + transitionSites(entry.spec).reduce((m, site) => m + site.transitions.length, 0), 0);
  return { states: states.length, transitions };
}

describe('path tests of the examples', () => {
  for (const [id, definition] of [
    ['order-support', orderSupport],
    ['incident-triage', incidentTriage],
  ] as const) {
    it(`${id}: the generated paths reach every state and take every transition the spec declares, and each run follows its path`, async () => {
      const spec = specOf(id);
      const { machine, calls } = withCountingTools(definition as never);
      const report = await testPaths(machine, { spec });
      const counts = specCounts(spec);
      expect(report.paths.filter((p) => !p.ok).map((p) => p.problem)).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.coverage.states.total).toBe(counts.states);
      expect(report.coverage.transitions.total).toBe(counts.transitions);
      expect(report.coverage.states.missed).toEqual([]);
      expect(report.coverage.transitions.missed).toEqual([]);
      expect(report.coverage.transitions.covered).toBe(counts.transitions);
      expect(report.findings).toEqual([]);
      // Path runs answer every call from the tools' examples: nothing is called for real.
      expect(totalCalls(calls)).toBe(0);
    }, 60_000);
  }
});

describe('a machine whose start branches on its input (support-billing: `always` guards on the context)', () => {
  it('counts the `always` transitions taken as a session starts, and the state they leave, as covered', () => {
    const machine = supportBilling.machine as AnyStateMachine;
    // The default context has no message: a session a billing.* message created keeps the charges.
    const started = startTransitions(machine, undefined);
    expect(started).toEqual(['support-billing.start||support-billing.charges']);
    expect(startTransitions(machine, { message: 'refund please', orderId: 'A1001' })).toEqual([
      'support-billing.start||support-billing.resolve_user',
    ]);
    const coverage = coverageOf(machine, ['charges'], started);
    expect(coverage.states.missed).not.toContain('support-billing.start');
    expect(coverage.transitions.missed).not.toContain(started[0]);
  });

  it('samples a start input for each branch of the start, and its paths reach every state and transition, call failures too', async () => {
    const spec = specOf('support-billing');
    const { machine, calls } = withCountingTools(supportBilling as never);
    const report = await testPaths(machine, { spec });
    expect(report.paths.filter((p) => !p.ok).map((p) => p.problem)).toEqual([]);
    expect(report.coverage.states.missed).toEqual([]);
    expect(report.coverage.transitions.missed).toEqual([]);
    expect(report.coverage.transitions.total).toBe(specCounts(spec).transitions);
    expect(new Set(report.paths.map((p) => p.states[0]))).toEqual(new Set(['charges', 'resolve_user', 'extract_order_id']));
    expect(report.paths.some((p) => p.states.at(-1) === 'failed')).toBe(true);
    expect(totalCalls(calls)).toBe(0);
  }, 60_000);
});

describe('static findings and path warnings', () => {
  const spec = FlowSpecSchema.parse({
    specVersion: 1,
    id: 'findings',
    context: { n: { type: 'number', default: 0 } },
    events: { GO: {}, NEVER: {} },
    initial: 'idle',
    states: {
      idle: { on: { GO: [{ guard: '1 > 2', target: 'lookup' }, { target: 'lookup' }] } },
      lookup: { invoke: { tool: 'bare', input: {}, onDone: 'stuck', onError: 'done' } },
      stuck: {},
      orphan: { on: { GO: 'done' } },
      done: { type: 'final' },
    },
  });

  it('reports unreachable states, dead ends, unused events and constant guards with their codes and places', () => {
    const findings = staticFindings(spec);
    expect(findings.map((f) => `${f.code} ${f.where}`).sort()).toEqual([
      'STATIC_CONSTANT_GUARD /states/idle/on/GO/0/guard',
      'STATIC_DEAD_END /states/stuck',
      'STATIC_UNREACHABLE_STATE /states/orphan',
      'STATIC_UNUSED_EVENT /events/NEVER',
    ]);
    expect(findings.find((f) => f.code === 'STATIC_CONSTANT_GUARD')!.message).toContain('always false');
  });

  it('counts an APPROVE or REJECT a parent forwards to the child machine it waits on as used, and warns when no child takes it', () => {
    const child = (id: string, on: Record<string, string>, invokes?: string): FlowSpec =>
      FlowSpecSchema.parse({
        specVersion: 1,
        id,
        context: {},
        events: { APPROVE: {}, REJECT: {} },
        initial: 'run',
        states: {
          run: invokes ? { invoke: { machine: invokes, input: {}, onDone: 'done', onError: 'done' } } : { on },
          done: { type: 'final' },
        },
      });
    const parent = child('parent', {}, 'middle');
    const waits = child('waits', { APPROVE: 'done', REJECT: 'done' });
    const bare = child('bare', { GO: 'done' });
    const unused = (specs: Record<string, FlowSpec>) =>
      staticFindings(parent, (id) => specs[id])
        .filter((f) => f.code === 'STATIC_UNUSED_EVENT')
        .map((f) => f.where);
    // Two levels down: parent invokes middle, which invokes the machine that waits.
    expect(unused({ middle: child('middle', {}, 'waits'), waits })).toEqual([]);
    expect(unused({ middle: child('middle', {}, 'bare'), bare })).toEqual(['/events/APPROVE', '/events/REJECT']);
    // A machine whose spec is not known may wait: no warning.
    expect(staticFindings(parent).filter((f) => f.code === 'STATIC_UNUSED_EVENT')).toEqual([]);
  });

  it('support-desk: no unused-event warning for the APPROVE and REJECT it forwards to support-billing', () => {
    const specs: Record<string, FlowSpec> = { 'support-orders': specOf('support-orders'), 'support-billing': specOf('support-billing') };
    expect(staticFindings(specOf('support-desk'), (id) => specs[id])).toEqual([]);
  });

  it('warns with PATH_NO_EXAMPLE when a path needs a tool that declares no examples', async () => {
    const bare = defineTool({
      name: 'bare',
      description: 'no examples',
      input: z.object({}),
      output: z.object({}),
      async run() {
        return {};
      },
    });
    const { setup } = await import('xstate');
    const { fromTool } = await import('@flowing/runtime');
    const machine = setup({ actors: { 'tool.bare': fromTool(bare) } }).createMachine({
      id: 'findings',
      initial: 'idle',
      context: { n: 0 },
      states: {
        idle: { on: { GO: { target: 'lookup' } } },
        lookup: {
          invoke: { id: 'lookup', src: 'tool.bare', input: () => ({ args: {} }), onDone: { target: 'stuck' }, onError: { target: 'done' } },
        },
        stuck: {},
        orphan: { on: { GO: { target: 'done' } } },
        done: { type: 'final' },
      },
    });
    const definition = defineMachine({ id: 'findings', specHash: 'x', machine, tools: { bare }, spec });
    const report = await testPaths(definition as never, { spec });
    expect(report.findings.filter((f) => f.code === 'PATH_NO_EXAMPLE')).toEqual([
      { code: 'PATH_NO_EXAMPLE', where: 'bare', message: expect.stringContaining("tool 'bare', which declares no examples") },
    ]);
    expect(report.coverage.states.missed).toEqual(['findings.orphan']);
  });
});
