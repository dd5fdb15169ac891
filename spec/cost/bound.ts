import { pointer, problem, type SpecProblem } from '../problems.ts';
import type { FlowSpec } from '../schema.ts';
import type { StateEntry } from '../walk.ts';
import type { ToolInfo } from '../validate.ts';
import { addCost, maxCost, METRICS, UNBOUNDED, ZERO, type Cost, type Metric } from './amount.ts';
import { analyzeScope, type CostLoop, type CostStep, type ScopeAnalysis } from './analysis.ts';
import { callBound, invokedMachine, type CallBound } from './calls.ts';
import { buildScope, graphContext, type CostEdge, type GraphContext } from './graph.ts';

export interface CostOptions {
  /** Tools from tools/, for their idempotency and retries (unknown tools count the default retries). */
  tools?: Record<string, ToolInfo>;
  /** The spec of a machine an invoke starts (`invoke.machine`); the CLI passes the project's, the studio those it knows. */
  resolveMachine?: (machineId: string) => FlowSpec | undefined;
}

/** The worst cost of one turn or one path, with the states it goes through and, per metric, the steps that reach it. */
export interface CostRow {
  /** `(start)`, or the state that declares the event (a waiting state, or an enclosing state for every state inside). */
  from: string;
  event?: string;
  /** The waiting, final or dead-end state the turn or path ends in. */
  to: string;
  cost: Cost;
  /** The states of the path with the most model calls. */
  states: string[];
  worst: Record<Metric, CostStep[]>;
}

export interface MachineCost {
  machineId: string;
  /** The machine waits for events: its costs are per turn, and per path with every turn counted once. */
  perTurn: boolean;
  /** Every turn: from the start, or from an event, to the next waiting, final or dead-end state. */
  turns: CostRow[];
  /** Every path from the start to each final state, each turn counted once. */
  paths: CostRow[];
  maximum: { turn: Cost; session: Cost };
  /** The paths were too many to enumerate: `session` adds up every turn once instead (still an upper bound). */
  approximate: boolean;
  /** The bound of each invoke, by state name. */
  calls: Record<string, CallBound & { pointer: string }>;
  loops: CostLoop[];
  /** COST_UNBOUNDED and COST_UNKNOWN_MACHINE findings. */
  problems: SpecProblem[];
}

const START = '(start)';
const PATH_SEARCH_LIMIT = 10_000;

/**
 * The most a session of `spec` can cost, from the spec alone: for every turn and every path to a final state, the
 * model calls, tool calls and tokens, through loops a counter bounds and machines the invokes start.
 * @example computeCost(spec, { resolveMachine: (id) => specs.get(id) }).maximum.turn.modelCalls
 */
export function computeCost(spec: FlowSpec, options: CostOptions = {}): MachineCost {
  return costOf(spec, options, new Map(), []);
}

function costOf(spec: FlowSpec, options: CostOptions, memo: Map<string, MachineCost>, stack: string[]): MachineCost {
  const cached = memo.get(spec.id);
  if (cached) return cached;
  const problems: SpecProblem[] = [];
  const calls: MachineCost['calls'] = {};
  const loops: CostLoop[] = [];
  const statePointer = (name: string) => {
    const entry = context.byName.get(name);
    return entry ? pointer(...entry.pointer) : '';
  };
  const enterCosts = new Map<StateEntry, Cost>();
  const enterCost = (entry: StateEntry, context: GraphContext): Cost => {
    const known = enterCosts.get(entry);
    if (known) return known;
    enterCosts.set(entry, ZERO); // a parallel state inside itself is not possible; this only guards the recursion
    let cost = ZERO;
    const invoke = entry.spec.invoke;
    if (invoke) {
      const bound = machineOrCallBound(invoke, entry);
      calls[entry.name] = { ...bound, pointer: pointer(...entry.pointer, 'invoke') };
      cost = addCost(cost, bound.cost);
    }
    if (entry.type === 'parallel') {
      for (const region of context.entries.filter((child) => child.parent === entry)) {
        let regionCost = enterCost(region, context);
        if (region.type === 'compound') {
          const analysis = analyzeScope(context, buildScope(context, region), statePointer);
          loops.push(...analysis.loops);
          const start = analysis.scope.start;
          if (start) {
            const ends = analysis.ends(start.to, { state: start.to, at: statePointer(start.to), cost: start.cost });
            regionCost = addCost(
              regionCost,
              ends.reduce((sum, end) => maxCost(sum, end.cost), ZERO),
            );
          }
        }
        cost = addCost(cost, regionCost);
      }
    }
    enterCosts.set(entry, cost);
    return cost;
  };
  const machineOrCallBound = (invoke: NonNullable<StateEntry['spec']['invoke']>, entry: StateEntry): CallBound => {
    const machine = invokedMachine(invoke);
    if (machine === undefined) return callBound(invoke, options.tools);
    const at = pointer(...entry.pointer, 'invoke', 'machine');
    if (stack.includes(machine) || machine === spec.id) {
      const cycle = [...stack.slice(stack.indexOf(machine)), spec.id, machine].join(' → ');
      problems.push(problem('COST_UNBOUNDED', at, `machine invocations form a cycle (${cycle}) that nothing bounds`));
      return { cost: UNBOUNDED, note: `machine ${machine}: a cycle of machine invocations`, machine };
    }
    const child = options.resolveMachine?.(machine);
    if (!child) {
      problems.push(problem('COST_UNKNOWN_MACHINE', at, `machine '${machine}' is not known, so what it costs is not either`));
      return { cost: UNBOUNDED, note: `machine ${machine}: not known`, machine };
    }
    const childCost = costOf(child, options, memo, [...stack, spec.id]);
    const total = childCost.maximum.session;
    if ((total.modelCalls === Infinity || total.toolCalls === Infinity) && childCost.problems.length > 0) {
      const first = childCost.problems[0]!;
      problems.push(problem('COST_UNBOUNDED', at, `machine '${machine}' has no bound: ${first.message} (at ${machine}#${first.path})`));
    }
    return { cost: total, note: `machine ${machine}: its most costly path`, machine };
  };
  const context = graphContext(spec, enterCost);
  for (const entry of context.entries) enterCost(entry, context);

  const root = analyzeScope(context, buildScope(context, undefined), statePointer);
  loops.unshift(...root.loops);
  for (const loop of loops) {
    if (loop.passes !== null || METRICS.every((metric) => loop.cost[metric] === 0)) continue;
    const more = loop.states.length > loop.cycle.length - 1 ? ` (${loop.states.length} states in the loop)` : '';
    problems.push(
      problem('COST_UNBOUNDED', loop.pointer, `the loop ${loop.cycle.join(' → ')}${more} can repeat without a bound: ${loop.reason}`),
    );
  }

  const turns = turnsOf(root, statePointer);
  const { paths, approximate } = pathsOf(root, turns, context);
  const maximum = {
    turn: turns.rows.reduce((sum, row) => maxCost(sum, row.cost), ZERO),
    session: paths.length > 0 ? paths.reduce((sum, row) => maxCost(sum, row.cost), ZERO) : everyTurnOnce(turns),
  };
  const result: MachineCost = {
    machineId: spec.id,
    perTurn: root.scope.edges.some((edge) => edge.kind === 'event'),
    turns: turns.rows,
    paths,
    maximum,
    approximate: approximate || paths.length === 0,
    calls,
    loops,
    problems,
  };
  memo.set(spec.id, result);
  return result;
}

interface Turn {
  key: string;
  from: string;
  event?: string;
  /** Nodes the turn can start from: the event's source states (none for the start). */
  sources: Set<string>;
  target: string;
  rows: CostRow[];
  max: Cost;
}

function rowsFor(analysis: ScopeAnalysis, from: string, event: string | undefined, target: string, start: CostStep): CostRow[] {
  return analysis
    .ends(target, start)
    .map(({ end, cost, worst }) => lazyRow({ from, ...(event === undefined ? {} : { event }), to: end, cost }, worst));
}

/** A row whose worst paths are worked out when first read: a large machine has many turns, and most are never shown. */
function lazyRow(row: Omit<CostRow, 'states' | 'worst'>, worst: () => Record<Metric, CostStep[]>): CostRow {
  let steps: Record<Metric, CostStep[]> | undefined;
  return Object.defineProperties(row as CostRow, {
    worst: { enumerable: true, get: () => (steps ??= worst()) },
    states: { enumerable: true, get: () => (steps ??= worst()).modelCalls.flatMap((step) => step.loop?.states ?? [step.state]) },
  });
}

function turnsOf(analysis: ScopeAnalysis, statePointer: (name: string) => string): { rows: CostRow[]; byKey: Map<string, Turn> } {
  const byKey = new Map<string, Turn>();
  const start = analysis.scope.start;
  if (start) {
    const rows = rowsFor(analysis, START, undefined, start.to, { state: start.to, at: statePointer(start.to), cost: start.cost });
    byKey.set(START, { key: START, from: START, sources: new Set(), target: start.to, rows, max: maxOfRows(rows) });
  }
  // One turn per transition: an event declared on an enclosing state is one turn whichever state inside it was active.
  const groups = new Map<string, CostEdge[]>();
  for (const edge of analysis.scope.edges) {
    if (edge.kind !== 'event') continue;
    if (!groups.has(edge.pointer)) groups.set(edge.pointer, []);
    groups.get(edge.pointer)!.push(edge);
  }
  for (const [key, edges] of groups) {
    const first = edges[0]!;
    const cost = edges.reduce((sum, edge) => maxCost(sum, edge.cost), ZERO);
    const rows = rowsFor(analysis, first.declaredBy, first.key, first.to, { state: first.to, at: first.pointer, cost });
    const sources = new Set(edges.map((edge) => edge.from));
    byKey.set(key, {
      key,
      from: first.declaredBy,
      ...(first.key === undefined ? {} : { event: first.key }),
      sources,
      target: first.to,
      rows,
      max: maxOfRows(rows),
    });
  }
  return { rows: [...byKey.values()].flatMap((turn) => turn.rows), byKey };
}

function maxOfRows(rows: readonly CostRow[]): Cost {
  return rows.reduce((sum, row) => maxCost(sum, row.cost), ZERO);
}

function everyTurnOnce(turns: { byKey: Map<string, Turn> }): Cost {
  return [...turns.byKey.values()].reduce((sum, turn) => addCost(sum, turn.max), ZERO);
}

/**
 * Paths from the start to each final state as chains of turns, each turn at most once. A turn may be cut short by an
 * event a busy state handles (CANCEL while a call runs): that counts the whole interrupted turn, then the event's.
 */
function pathsOf(
  analysis: ScopeAnalysis,
  turns: { byKey: Map<string, Turn> },
  context: GraphContext,
): { paths: CostRow[]; approximate: boolean } {
  const startTurn = turns.byKey.get(START);
  if (!startTurn) return { paths: [], approximate: false };
  const isFinal = (node: string) => context.byName.get(node)?.type === 'final' || !analysis.scope.edges.some((edge) => edge.from === node);
  const all = [...turns.byKey.values()].filter((turn) => turn.key !== START);
  const bySource = new Map<string, Turn[]>();
  for (const turn of all) {
    for (const source of turn.sources) {
      if (!bySource.has(source)) bySource.set(source, []);
      bySource.get(source)!.push(turn);
    }
  }
  const interrupts = all.filter((turn) => [...turn.sources].some((source) => !analysis.sinks.has(source)));
  const cutsOf = new Map<string, Turn[]>();
  const cutsDuring = (turn: Turn) => {
    let cuts = cutsOf.get(turn.key);
    if (!cuts) {
      const passed = analysis.reach(turn.target);
      cuts = interrupts.filter((cut) => [...cut.sources].some((source) => passed.has(source) && !analysis.sinks.has(source)));
      cutsOf.set(turn.key, cuts);
    }
    return cuts;
  };
  const best = new Map<string, { cost: Cost; trail: Record<Metric, Array<{ turn: Turn; row: CostRow | undefined }>> }>();
  let steps = 0;
  let approximate = false;
  type Trail = Array<{ turn: Turn; row: CostRow | undefined }>;
  const record = (node: string, acc: Cost, trail: Trail) => {
    const known = best.get(node) ?? {
      cost: { modelCalls: -1, toolCalls: -1, tokens: -1 },
      trail: { modelCalls: [], toolCalls: [], tokens: [] },
    };
    for (const metric of METRICS) {
      if (acc[metric] > known.cost[metric]) {
        known.cost[metric] = acc[metric];
        known.trail[metric] = [...trail];
      }
    }
    best.set(node, known);
  };
  // Depth first with one `used` set and one trail, undone on the way back. `before` is the cost up to the turn that
  // led here (`turn`, ending with `row`).
  const used = new Set<string>([START]);
  const trail: Trail = [];
  const visit = (node: string, before: Cost, turn: Turn, row: CostRow) => {
    const acc = addCost(before, row.cost);
    if (++steps > PATH_SEARCH_LIMIT) {
      approximate = true;
      return;
    }
    if (isFinal(node)) record(node, acc, trail);
    for (const next of bySource.get(node) ?? []) {
      if (approximate) return;
      if (used.has(next.key)) continue;
      used.add(next.key);
      for (const nextRow of next.rows) {
        trail.push({ turn: next, row: nextRow });
        visit(nextRow.to, acc, next, nextRow);
        trail.pop();
      }
      used.delete(next.key);
    }
    // The turn that led here may have been cut short by an event a state it passed handles.
    for (const cut of cutsDuring(turn)) {
      if (approximate) return;
      if (used.has(cut.key)) continue;
      const base = addCost(before, turn.max);
      used.add(cut.key);
      const last = trail.pop()!;
      trail.push({ turn, row: undefined });
      for (const cutRow of cut.rows) {
        trail.push({ turn: cut, row: cutRow });
        visit(cutRow.to, base, cut, cutRow);
        trail.pop();
      }
      trail.pop();
      trail.push(last);
      used.delete(cut.key);
    }
  };
  for (const row of startTurn.rows) {
    if (approximate) break;
    trail.push({ turn: startTurn, row });
    visit(row.to, ZERO, startTurn, row);
    trail.pop();
  }
  if (approximate) {
    const total = everyTurnOnce(turns);
    const finals = [...analysis.sinks].filter(isFinal);
    return {
      paths: finals.map((to) => ({ from: START, to, cost: total, states: [], worst: { modelCalls: [], toolCalls: [], tokens: [] } })),
      approximate,
    };
  }
  const paths = [...best].map(([to, { cost, trail }]) =>
    lazyRow({ from: START, to, cost }, () => {
      const worst = {} as Record<Metric, CostStep[]>;
      for (const metric of METRICS) worst[metric] = trail[metric].flatMap(({ turn, row }) => (row ?? worstRow(turn, metric)).worst[metric]);
      return worst;
    }),
  );
  return { paths, approximate };
}

function worstRow(turn: Turn, metric: Metric): CostRow {
  return turn.rows.reduce((a, b) => (b.cost[metric] > a.cost[metric] ? b : a));
}
