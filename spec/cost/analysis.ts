import type { CostEdge, CostScope, GraphContext } from './graph.ts';
import { addCost, maxCost, METRICS, timesCost, UNBOUNDED, ZERO, type Cost, type Metric } from './amount.ts';
import { components, loopBound } from './loops.ts';

/** One step of a worst path: a state entered (and the calls that cost), or a loop gone round. */
export interface CostStep {
  state: string;
  /** JSON pointer of the call this step pays for (or of the state, when it calls nothing). */
  at: string;
  cost: Cost;
  loop?: { states: string[]; passes: number | null };
}

/** A loop of states the session takes by itself. */
export interface CostLoop {
  states: string[];
  /** The shortest way round from the first state, for messages. */
  cycle: string[];
  pointer: string;
  /** How many times its guarded edges may pass, or null with the reason when nothing bounds it. */
  passes: number | null;
  counter?: string;
  reason?: string;
  cost: Cost;
}

/** What the analysis of a scope gives: the worst cost from a node to each end it can reach. */
export interface ScopeAnalysis {
  scope: CostScope;
  /** Nodes with no way on by themselves: they wait for an event, are final, or are dead ends. */
  sinks: Set<string>;
  loops: CostLoop[];
  /**
   * Worst cost from `from` to each end, and the worst steps per metric (worked out when asked: most callers need the
   * numbers only); `start` is the step that got to `from`.
   */
  ends(from: string, start: CostStep): Array<{ end: string; cost: Cost; worst: () => Record<Metric, CostStep[]> }>;
  /** Nodes reachable from `from` without an event. */
  reach(from: string): Set<string>;
}

export function analyzeScope(context: GraphContext, scope: CostScope, statePointer: (name: string) => string): ScopeAnalysis {
  const auto = scope.edges.filter((edge) => edge.kind === 'auto');
  const comps = components(scope.nodes, auto);
  const compOf = new Map<string, number>();
  comps.forEach((members, i) => {
    for (const member of members) compOf.set(member, i);
  });
  const outOf = new Map<number, CostEdge[]>();
  const innerOf = new Map<number, CostEdge[]>();
  for (const edge of auto) {
    const from = compOf.get(edge.from)!;
    const to = compOf.get(edge.to);
    if (to === undefined) continue;
    const bucket = from === to ? innerOf : outOf;
    if (!bucket.has(from)) bucket.set(from, []);
    bucket.get(from)!.push(edge);
  }
  const loops: CostLoop[] = [];
  const loopOf = new Map<number, CostLoop>();
  const compCost = comps.map((members, i) => {
    const inner = innerOf.get(i) ?? [];
    if (inner.length === 0) return ZERO;
    const once = inner.reduce((sum, edge) => addCost(sum, edge.cost), ZERO);
    const memberSet = new Set(members);
    const entering = scope.edges.filter((edge) => memberSet.has(edge.to) && !memberSet.has(edge.from));
    const startsHere = scope.start !== undefined && memberSet.has(scope.start.to);
    const bound = loopBound(context.spec, members, inner, entering, startsHere);
    // Each segment between two passes of a guarded edge takes every edge of the loop at most once.
    const cost = bound.ok ? timesCost(once, bound.passes + 1) : timesCost(once, Infinity);
    const loop: CostLoop = {
      states: members,
      cycle: shortestCycle(members[0]!, inner),
      pointer: statePointer(members[0]!),
      passes: bound.ok ? bound.passes : null,
      ...(bound.ok ? { counter: bound.counter } : { reason: bound.reason }),
      cost,
    };
    loops.push(loop);
    loopOf.set(i, loop);
    return cost;
  });
  const autoFrom = new Map<string, CostEdge[]>();
  for (const edge of auto) {
    if (!autoFrom.has(edge.from)) autoFrom.set(edge.from, []);
    autoFrom.get(edge.from)!.push(edge);
  }
  const sinks = new Set(scope.nodes.filter((node) => !autoFrom.has(node)));

  const memo = new Map<string, Record<Metric, { value: Float64Array; choice: Array<CostEdge | undefined> }>>();
  const toEnd = (end: string) => {
    let found = memo.get(end);
    if (found) return found;
    const endComp = compOf.get(end)!;
    found = {} as Record<Metric, { value: Float64Array; choice: Array<CostEdge | undefined> }>;
    for (const metric of METRICS) {
      const value = new Float64Array(comps.length).fill(-Infinity);
      const choice: Array<CostEdge | undefined> = new Array(comps.length);
      // Components come sinks first, so every successor is done before its predecessors.
      for (let c = 0; c < comps.length; c++) {
        if (c === endComp) {
          value[c] = compCost[c]![metric];
          continue;
        }
        let best = -Infinity;
        for (const edge of outOf.get(c) ?? []) {
          const next = value[compOf.get(edge.to)!]!;
          if (next === -Infinity) continue;
          const candidate = edge.cost[metric] + next;
          if (choice[c] === undefined || candidate > best) {
            best = candidate;
            choice[c] = edge;
          }
        }
        if (best !== -Infinity) value[c] = compCost[c]![metric] + best;
      }
      found[metric] = { value, choice };
    }
    memo.set(end, found);
    return found;
  };

  const enteredStep = (edge: CostEdge): CostStep => {
    const paying = edge.entered.find((name) => {
      const entry = context.byName.get(name);
      return entry !== undefined && Object.values(context.enterCost(entry)).some((v) => v !== 0);
    });
    const entry = paying === undefined ? undefined : context.byName.get(paying);
    const at = entry ? statePointer(entry.name) + (entry.spec.invoke ? '/invoke' : '') : statePointer(edge.to);
    return { state: edge.to, at, cost: edge.cost };
  };

  const reachable = new Map<string, Set<string>>();
  return {
    scope,
    sinks,
    loops,
    reach(from) {
      let seen = reachable.get(from);
      if (seen) return seen;
      seen = new Set([from]);
      const queue = [from];
      while (queue.length > 0) {
        const node = queue.pop()!;
        for (const edge of autoFrom.get(node) ?? []) {
          if (seen.has(edge.to)) continue;
          seen.add(edge.to);
          queue.push(edge.to);
        }
      }
      reachable.set(from, seen);
      return seen;
    },
    ends(from, start) {
      const out: Array<{ end: string; cost: Cost; worst: () => Record<Metric, CostStep[]> }> = [];
      const fromComp = compOf.get(from);
      if (fromComp === undefined) return out;
      for (const end of sinks) {
        const table = toEnd(end);
        if (table.modelCalls.value[fromComp] === -Infinity) continue;
        const cost = { ...ZERO };
        for (const metric of METRICS) cost[metric] = start.cost[metric] + table[metric].value[fromComp]!;
        const worst = () => {
          const steps = {} as Record<Metric, CostStep[]>;
          for (const metric of METRICS) {
            const path: CostStep[] = [start];
            for (let c: number | undefined = fromComp; c !== undefined; ) {
              const loop = loopOf.get(c);
              if (loop)
                path.push({
                  state: loop.states[0]!,
                  at: loop.pointer,
                  cost: loop.cost,
                  loop: { states: loop.states, passes: loop.passes },
                });
              if (c === compOf.get(end)) break;
              const edge = table[metric].choice[c];
              if (!edge) break;
              path.push(enteredStep(edge));
              c = compOf.get(edge.to);
            }
            steps[metric] = path;
          }
          return steps;
        };
        out.push({ end, cost, worst });
      }
      return out;
    },
  };
}

function shortestCycle(first: string, inner: readonly CostEdge[]): string[] {
  const previous = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const edge of inner) {
      if (edge.from !== node) continue;
      if (edge.to === first) {
        const path = [node];
        for (let at = node; at !== first; ) path.unshift((at = previous.get(at)!));
        return [...path, first];
      }
      if (previous.has(edge.to)) continue;
      previous.set(edge.to, node);
      queue.push(edge.to);
    }
  }
  return [first, first];
}

/** The most any of `costs` reaches, per metric. */
export function maxOf(costs: readonly Cost[]): Cost {
  return costs.reduce(maxCost, ZERO);
}

export { UNBOUNDED };
