import { getAdjacencyMap, getShortestPaths } from '@xstate/graph';
import type { AnyMachineSnapshot, AnyStateMachine, AnyStateNode } from 'xstate';
import type { FieldMap, FieldType } from '@flowing/spec';
import type { AnyMachineDefinition } from '../definition.ts';
import { stableJson } from '../session/approvals.ts';
import type { CaseInput, RecordedCall } from './case-file.ts';
import { TestingError } from './errors.ts';
import { stateLabel, transitionKey } from './observe.ts';
import type { Finding } from './static-checks.ts';
import { activeNodes } from '../xstate-adapter.ts';

/** A path through the machine the graph found, as a script the headless runtime can run. */
export interface MachinePath {
  name: string;
  /** Events to send, and `timer` steps where the path waits for a delayed transition with nothing in flight. */
  inputs: CaseInput[];
  calls: RecordedCall[];
  /** The states the graph says the session passes through (one per step, the initial one first). */
  states: string[];
}

export interface PathPlan {
  paths: MachinePath[];
  findings: Finding[];
  /** Snapshots the traversal explored. */
  explored: number;
}

export interface PlanOptions {
  maxSnapshots?: number;
  /**
   * The output fields a machine declares (its spec's top-level `output`): a machine invoke's sample results are filled
   * from them (every field, and the required ones only). Without it, a child session answers `{}`.
   */
  machineOutput?: (machineId: string) => FieldMap | undefined;
}

/** Default bound on the snapshots a traversal explores (a context that grows without end would never stop). */
export const DEFAULT_MAX_SNAPSHOTS = 20_000;

type Event = { type: string; [key: string]: unknown };
/** @xstate/graph's adjacency map, keyed by serialised snapshot, then by serialised event. */
type Adjacency = Record<string, { state: AnyMachineSnapshot; transitions: Record<string, { event: Event; state: AnyMachineSnapshot }> }>;

/**
 * Finds, with `@xstate/graph`, paths that together take every transition the machine can take: the graph's events are
 * the declared events (a sample payload each, every value of enum and boolean fields), each call's results (every
 * declared example output of a tool, every label of a classify, a filled and an empty extract, the tool's error examples
 * and declared codes, a generic failure) and its timers. Each path is the shortest way to a transition, taken, then
 * continued until no call is in flight.
 */
export function planPaths(definition: AnyMachineDefinition, options: PlanOptions = {}): PathPlan {
  const machine = definition.machine as AnyStateMachine;
  const findings: Finding[] = [];
  const warned = new Set<string>();
  const events = (snapshot: AnyMachineSnapshot) =>
    eventsFor(definition, snapshot, options.machineOutput, (tool) => {
      if (warned.has(tool)) return;
      warned.add(tool);
      findings.push({
        code: 'PATH_NO_EXAMPLE',
        where: tool,
        message: `a path needs a result of tool '${tool}', which declares no examples; add examples: [{ input, output }] to its defineTool`,
      });
    });
  // A conversation grows with every message; what it holds is not a state the graph branches on, so two snapshots
  // that differ only there are one (else every chat loop would be a new snapshot until the traversal's limit).
  const conversations = Object.entries(definition.contextFields)
    .filter(([, field]) => field.type === 'conversation')
    .map(([name]) => name);
  const withoutConversations = (context: unknown) => {
    if (conversations.length === 0 || !context || typeof context !== 'object') return context;
    const rest = { ...(context as Record<string, unknown>) };
    for (const name of conversations) delete rest[name];
    return rest;
  };
  const serializeState = (snapshot: AnyMachineSnapshot) =>
    stableJson({ value: snapshot.value, context: withoutConversations(snapshot.context), status: snapshot.status });
  const limit = options.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS;
  const traversal = { events, serializeState, limit } as never;
  let adjacency: Adjacency;
  let shortest: ReturnType<typeof getShortestPaths<AnyStateMachine>>;
  try {
    adjacency = getAdjacencyMap(machine, traversal) as unknown as Adjacency;
    shortest = getShortestPaths(machine, traversal);
  } catch (error) {
    if (!/limit/i.test((error as Error).message)) throw error;
    throw new TestingError(
      'PATH_LIMIT',
      `machine '${definition.id}': more than ${limit} distinct snapshots; its context may grow without bound (pass a larger maxSnapshots, or fewer examples)`,
    );
  }
  const toSource = new Map<string, Array<{ event: Event; state: AnyMachineSnapshot }>>();
  for (const path of shortest) toSource.set(serializeState(path.state as AnyMachineSnapshot), path.steps as never);

  // For every transition, the edge that takes it whose source is nearest the start.
  const best = new Map<string, { source: string; event: Event; weight: number }>();
  for (const [source, entry] of Object.entries(adjacency)) {
    const steps = toSource.get(source);
    if (!steps) continue;
    for (const { event } of Object.values(entry.transitions)) {
      for (const t of machine.getTransitionData(entry.state as AnyMachineSnapshot, event as never)) {
        const key = transitionKey(
          t.source.id,
          t.eventType,
          (t.target ?? []).map((n: AnyStateNode) => n.id),
        );
        const current = best.get(key);
        if (!current || steps.length < current.weight) best.set(key, { source, event: event as Event, weight: steps.length });
      }
    }
  }
  const routes: Array<Array<{ event: Event; state: AnyMachineSnapshot }>> = [];
  for (const { source, event } of best.values()) {
    const head = toSource.get(source)!;
    const next = adjacency[source]!.transitions[stableJsonEvent(adjacency, source, event)]?.state as AnyMachineSnapshot | undefined;
    if (!next) continue;
    routes.push([...head, { event, state: next }, ...settle(adjacency, serializeState, next)]);
  }
  const unique = dropPrefixes(routes);
  const paths = unique.map((steps, i) => toScript(`path ${i + 1}`, steps));
  return { paths, findings, explored: Object.keys(adjacency).length };
}

/** The adjacency key of `event` from `source` (the map is keyed by @xstate/graph's serialised events). */
function stableJsonEvent(adjacency: Adjacency, source: string, event: Event): string {
  for (const [key, value] of Object.entries(adjacency[source]!.transitions)) if (value.event === event) return key;
  return '';
}

/** The shortest continuation from `from` to a snapshot with no call in flight (calls answered by their first result). */
function settle(adjacency: Adjacency, serialize: (s: AnyMachineSnapshot) => string, from: AnyMachineSnapshot) {
  type Step = { event: Event; state: AnyMachineSnapshot };
  const queue: Array<{ snapshot: AnyMachineSnapshot; steps: Step[] }> = [{ snapshot: from, steps: [] }];
  const seen = new Set([serialize(from)]);
  while (queue.length > 0) {
    const { snapshot, steps } = queue.shift()!;
    if (!inFlight(snapshot)) return steps;
    const entry = adjacency[serialize(snapshot)];
    if (!entry) return steps;
    for (const { event, state } of Object.values(entry.transitions)) {
      const type = (event as Event).type;
      if (!type.startsWith('xstate.done.actor.') && !type.startsWith('xstate.error.actor.')) continue;
      const key = serialize(state as AnyMachineSnapshot);
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push({
        snapshot: state as AnyMachineSnapshot,
        steps: [...steps, { event: event as Event, state: state as AnyMachineSnapshot }],
      });
    }
  }
  return [];
}

function inFlight(snapshot: AnyMachineSnapshot): boolean {
  return snapshot.status === 'active' && Object.keys(snapshot.children ?? {}).length > 0;
}

/** Routes that are not the beginning of a longer one. */
function dropPrefixes<T extends { event: Event }>(routes: T[][]): T[][] {
  const keys = routes.map((r) => r.map((s) => stableJson(s.event)));
  return routes.filter(
    (_, i) =>
      !keys.some(
        (other, j) =>
          j !== i &&
          other.length >= keys[i]!.length &&
          (other.length > keys[i]!.length || j < i) &&
          keys[i]!.every((k, n) => k === other[n]),
      ),
  );
}

/**
 * A route as inputs and recorded call results. A timer taken while calls are in flight leaves them unanswered (the
 * run fires it while it waits for them); a timer taken with nothing in flight is a `timer` input, since nothing
 * else would make the quiet session's time pass.
 */
function toScript(name: string, steps: Array<{ event: Event; state: AnyMachineSnapshot }>): MachinePath {
  const inputs: CaseInput[] = [];
  const calls: RecordedCall[] = [];
  const states: string[] = [];
  let previous: AnyMachineSnapshot | undefined;
  for (const { event, state } of steps) {
    const type = event.type;
    const actorId = type.replace(/^xstate\.(done|error)\.actor\./, '');
    if (type === 'xstate.init') {
      // the start
    } else if (type.startsWith('xstate.done.actor.') || type.startsWith('xstate.error.actor.')) {
      const src = sourceOf(previous, actorId);
      if (src) {
        const result = type.startsWith('xstate.done.')
          ? { ok: true as const, output: event.output }
          : { ok: false as const, error: event.error as { code: string; message: string } };
        calls.push({ type: 'call', ...src, result });
      }
    } else if (type.startsWith('xstate.after.')) {
      let waiting = false;
      for (const id of Object.keys(previous?.children ?? {})) {
        const src = sourceOf(previous, id);
        if (src) calls.push({ type: 'call', ...src, result: { pending: true } });
        waiting ||= src !== undefined;
      }
      if (!waiting) inputs.push({ type: 'timer', delay: type.slice('xstate.after.'.length).split('.')[0]! });
    } else if (!type.startsWith('xstate.')) {
      inputs.push({ type: 'event', event });
    }
    states.push(stateLabel(state.value));
    previous = state;
  }
  return { name, inputs, calls, states };
}

/** Which tool or model kind the invoke `actorId` of the snapshot's active states calls. */
function sourceOf(snapshot: AnyMachineSnapshot | undefined, actorId: string): { call: RecordedCall['call']; name: string } | undefined {
  for (const node of snapshot ? activeNodes(snapshot) : []) {
    for (const invoke of node.invoke) {
      if (invoke.id !== actorId || typeof invoke.src !== 'string') continue;
      if (invoke.src.startsWith('tool.')) return { call: 'tool', name: invoke.src.slice(5) };
      if (invoke.src.startsWith('llm.')) return { call: 'llm', name: invoke.src.slice(4) };
      if (invoke.src.startsWith('machine.')) return { call: 'machine', name: invoke.src.slice(8) };
    }
  }
  return undefined;
}

/** The events the graph tries from a snapshot. */
function eventsFor(
  definition: AnyMachineDefinition,
  snapshot: AnyMachineSnapshot,
  machineOutput: PlanOptions['machineOutput'],
  noExample: (tool: string) => void,
): Event[] {
  if (snapshot.status !== 'active') return [];
  const out = new Map<string, Event>();
  const add = (event: Event) => out.set(stableJson(event), event);
  for (const node of activeNodes(snapshot)) {
    for (const type of node.transitions.keys()) {
      if (definition.eventFields[type]) for (const sample of payloadSamples(definition.eventFields[type]!)) add({ type, ...sample });
      else if (type.startsWith('xstate.after.')) add({ type });
    }
    for (const invoke of node.invoke) {
      const id = invoke.id;
      const src = typeof invoke.src === 'string' ? invoke.src : '';
      const input = (snapshot.children?.[id] as { getSnapshot?: () => { input?: unknown } } | undefined)?.getSnapshot?.().input as
        | Record<string, unknown>
        | undefined;
      for (const output of outputsFor(definition, src, input, machineOutput, noExample))
        add({ type: `xstate.done.actor.${id}`, output, actorId: id });
      for (const error of errorsFor(definition, src)) add({ type: `xstate.error.actor.${id}`, error, actorId: id });
    }
  }
  return [...out.values()];
}

function outputsFor(
  definition: AnyMachineDefinition,
  src: string,
  input: Record<string, unknown> | undefined,
  machineOutput: PlanOptions['machineOutput'],
  noExample: (tool: string) => void,
): unknown[] {
  if (src.startsWith('machine.')) return filledAndRequired(machineOutput?.(src.slice(8)) ?? {});
  if (src.startsWith('tool.')) {
    const tool = definition.tools[src.slice(5)];
    if (tool && tool.examples.length > 0) return tool.examples.map((e) => e.output);
    noExample(src.slice(5));
    return [{}];
  }
  switch (src) {
    case 'llm.classify':
      return ((input?.labels as string[] | undefined) ?? []).map((label) => ({ label }));
    case 'llm.extract':
      return filledAndRequired((input?.fields ?? {}) as FieldMap);
    case 'llm.generate':
      return [{ text: 'A generated reply.' }];
    case 'llm.agent':
      // An answer, and a handoff to each target the call declares (each is an onDone edge of its own).
      return [
        { text: 'An agent answer.', steps: 1 },
        ...((input?.handoffs as string[] | undefined) ?? []).map((to) => ({ text: '', steps: 1, handoff: { to, message: 'A1001' } })),
      ];
    default:
      return [];
  }
}

/** Two samples of an object with these fields: every field filled, and the required ones only (one when they agree). */
function filledAndRequired(fields: FieldMap): Array<Record<string, unknown>> {
  const filled = Object.fromEntries(Object.entries(fields).map(([k, t]) => [k, sampleOf(t)]));
  const required = Object.fromEntries(
    Object.entries(fields)
      .filter(([, t]) => !t.optional)
      .map(([k, t]) => [k, sampleOf(t)]),
  );
  return stableJson(filled) === stableJson(required) ? [filled] : [filled, required];
}

function errorsFor(definition: AnyMachineDefinition, src: string): Array<{ code: string; message: string }> {
  if (src.startsWith('machine.')) return [{ code: 'CHILD_FAILED', message: 'the child session failed' }];
  if (!src.startsWith('tool.')) return src.startsWith('llm.') ? [{ code: 'LLM_FAILED', message: 'the model call failed' }] : [];
  const tool = definition.tools[src.slice(5)];
  const errors = new Map<string, { code: string; message: string }>();
  for (const e of tool?.errorExamples ?? []) errors.set(e.error.code, e.error);
  for (const [code, message] of Object.entries(tool?.errors ?? {})) if (!errors.has(code)) errors.set(code, { code, message });
  if (!errors.has('TOOL_FAILED')) errors.set('TOOL_FAILED', { code: 'TOOL_FAILED', message: 'the tool failed' });
  return [...errors.values()];
}

/** Payloads for an event: one sample, multiplied out over enum values and booleans (at most 16). */
function payloadSamples(fields: FieldMap): Array<Record<string, unknown>> {
  let samples: Array<Record<string, unknown>> = [{}];
  for (const [name, type] of Object.entries(fields)) {
    const values = type.type === 'enum' ? [...(type.values ?? [])] : type.type === 'boolean' ? [true, false] : [sampleOf(type)];
    samples = samples.flatMap((s) => values.map((v) => ({ ...s, [name]: v }))).slice(0, 16);
  }
  return samples;
}

function sampleOf(type: FieldType): unknown {
  switch (type.type) {
    case 'string':
      return 'A1001';
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'enum':
      return type.values?.[0];
    case 'array':
      return [];
    case 'object':
      return Object.fromEntries(
        Object.entries(type.fields ?? {})
          .filter(([, t]) => !t.optional)
          .map(([k, t]) => [k, sampleOf(t)]),
      );
    default:
      return null;
  }
}
