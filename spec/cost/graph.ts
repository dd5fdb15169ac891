import { pointer } from '../problems.ts';
import type { FlowSpec, TransitionObject } from '../schema.ts';
import { listStates, transitionSites, type StateEntry, type TransitionSite } from '../walk.ts';
import { addCost, ZERO, type Cost } from './amount.ts';

/**
 * The machine as the cost bound sees it: nodes are the states a session rests in (atomic and final states, and a
 * parallel state as one node whose regions it enters at once), edges are transitions with what entering their
 * target costs. A scope is the whole machine, or one region of a parallel state.
 */
export interface CostEdge {
  from: string;
  to: string;
  /** `event`: an external event (`on`); `auto`: the session takes it by itself (always, after, a call's result, done). */
  kind: 'event' | 'auto';
  site: TransitionSite['kind'];
  /** The event name or delay. */
  key?: string;
  /** The state that declares the transition. */
  declaredBy: string;
  /** JSON pointer of the transition. */
  pointer: string;
  transition: TransitionObject;
  /** Assignments the transition makes: its own, the exited states' exit and the entered states' entry assigns. */
  assigns: Array<Record<string, string>>;
  /** A named action runs on the way (it may write any context field). */
  namedActions: boolean;
  /** States entered, outermost first. */
  entered: string[];
  /** What the invokes of the entered states cost. */
  cost: Cost;
}

export interface CostScope {
  /** The region's state, or undefined for the machine. */
  root: StateEntry | undefined;
  nodes: string[];
  edges: CostEdge[];
  /** Entering the scope: the node it starts in and what that costs. */
  start: { to: string; entered: string[]; cost: Cost } | undefined;
}

export interface GraphContext {
  spec: FlowSpec;
  entries: StateEntry[];
  byName: Map<string, StateEntry>;
  /** What entering one state costs: its invoke, and for a parallel state its regions. */
  enterCost: (entry: StateEntry) => Cost;
}

export function graphContext(spec: FlowSpec, enterCost: (entry: StateEntry, context: GraphContext) => Cost): GraphContext {
  const entries = listStates(spec);
  const byName = new Map<string, StateEntry>();
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  const context: GraphContext = { spec, entries, byName, enterCost: (entry) => enterCost(entry, context) };
  return context;
}

function chain(entry: StateEntry): StateEntry[] {
  const out: StateEntry[] = [];
  for (let at: StateEntry | undefined = entry; at; at = at.parent) out.unshift(at);
  return out;
}

function within(entry: StateEntry, root: StateEntry | undefined): boolean {
  if (!root) return true;
  for (let at: StateEntry | undefined = entry; at; at = at.parent) if (at === root) return true;
  return false;
}

/** The outermost parallel state strictly between `root` and `entry` (the node `entry` belongs to), if any. */
function parallelAbove(entry: StateEntry, root: StateEntry | undefined): StateEntry | undefined {
  let found: StateEntry | undefined;
  for (let at = entry.parent; at && at !== root; at = at.parent) if (at.type === 'parallel') found = at;
  return found;
}

/** The node a transition to `target` lands in, and the states it enters on the way from `source`. */
function enter(context: GraphContext, source: StateEntry | undefined, target: StateEntry, root: StateEntry | undefined) {
  const inside = parallelAbove(target, root);
  let path = chain(inside ?? target);
  let node = inside ?? target;
  while (node.type === 'compound') {
    const child = node.spec.initial === undefined ? undefined : context.byName.get(node.spec.initial);
    if (!child || child.parent !== node) break;
    node = child;
    path = [...path, child];
  }
  const from = source ? chain(source) : [];
  // A transition to the source state itself (or an ancestor) exits and enters it again: counting its invoke again
  // keeps the bound an upper bound.
  const targetDepth = chain(inside ?? target).length;
  let shared = 0;
  while (shared < from.length && shared < targetDepth - 1 && from[shared] === path[shared]) shared++;
  const entered = path.slice(shared);
  const exited = from.slice(shared);
  return { node, entered, exited };
}

function edgeFor(
  context: GraphContext,
  source: StateEntry,
  declaredBy: StateEntry,
  site: TransitionSite,
  index: number,
  root: StateEntry | undefined,
  kindOverride: 'auto' | undefined,
): CostEdge | undefined {
  const normalized = site.transitions[index]!;
  const { transition } = normalized;
  if (transition.target === undefined) return undefined;
  const target = context.byName.get(transition.target);
  if (!target || !within(target, root)) return undefined;
  const { node, entered, exited } = enter(context, source, target, root);
  const assigns: Array<Record<string, string>> = [];
  let namedActions = (transition.actions?.length ?? 0) > 0;
  for (const state of [...exited].reverse()) {
    if (state.spec.exit?.assign) assigns.push(state.spec.exit.assign);
    if (state.spec.exit?.actions?.length) namedActions = true;
  }
  if (transition.assign) assigns.push(transition.assign);
  for (const state of entered) {
    if (state.spec.entry?.assign) assigns.push(state.spec.entry.assign);
    if (state.spec.entry?.actions?.length) namedActions = true;
  }
  return {
    from: source.name,
    to: node.name,
    kind: kindOverride ?? (site.kind === 'on' ? 'event' : 'auto'),
    site: site.kind,
    ...(site.key === undefined ? {} : { key: site.key }),
    declaredBy: declaredBy.name,
    pointer: pointer(...declaredBy.pointer, ...normalized.pointer),
    transition,
    assigns,
    namedActions,
    entered: entered.map((state) => state.name),
    cost: entered.reduce((sum, state) => addCost(sum, context.enterCost(state)), ZERO),
  };
}

/**
 * The nodes and edges of one scope. In a region of a parallel state every transition counts as taken by itself:
 * the region's events are part of what the parallel state costs.
 */
export function buildScope(context: GraphContext, root: StateEntry | undefined): CostScope {
  const kindOverride = root ? 'auto' : undefined;
  const nodes = context.entries.filter(
    (entry) => entry !== root && within(entry, root) && entry.type !== 'compound' && parallelAbove(entry, root) === undefined,
  );
  const edges: CostEdge[] = [];
  const add = (edge: CostEdge | undefined) => {
    if (edge) edges.push(edge);
  };
  const sitesOf = (entry: StateEntry, kinds: ReadonlySet<TransitionSite['kind']>) =>
    transitionSites(entry.spec).filter((site) => kinds.has(site.kind));
  const OWN = new Set<TransitionSite['kind']>(['on', 'after', 'always', 'onDone', 'onError']);
  for (const node of nodes) {
    // Its own transitions and those of every enclosing state up to the scope's root.
    for (let at: StateEntry | undefined = node; at && within(at, root); at = at.parent) {
      for (const site of sitesOf(at, OWN))
        site.transitions.forEach((_, i) => add(edgeFor(context, node, at!, site, i, root, kindOverride)));
      if (at === root) break;
    }
    // A final state completes its parent: the parent's onDone follows.
    const parent = node.parent;
    if (node.type === 'final' && parent && parent !== root && parent.type === 'compound') {
      for (const site of sitesOf(parent, new Set(['done'])))
        site.transitions.forEach((_, i) => add(edgeFor(context, node, parent, site, i, root, kindOverride)));
    }
    if (node.type === 'parallel') {
      // Done when every region is final; and a transition inside a region may leave the parallel state.
      for (const site of sitesOf(node, new Set(['done'])))
        site.transitions.forEach((_, i) => add(edgeFor(context, node, node, site, i, root, kindOverride)));
      for (const inner of context.entries) {
        if (inner === node || !within(inner, node)) continue;
        for (const site of sitesOf(inner, new Set([...OWN, 'done']))) {
          site.transitions.forEach((normalized, i) => {
            const target = normalized.transition.target === undefined ? undefined : context.byName.get(normalized.transition.target);
            if (target && !within(target, node)) add(edgeFor(context, node, inner, site, i, root, kindOverride));
          });
        }
      }
    }
  }
  let start: CostScope['start'];
  const initialName = root ? root.spec.initial : context.spec.initial;
  const initial = initialName === undefined ? undefined : context.byName.get(initialName);
  if (initial && within(initial, root) && initial !== root) {
    const { node, entered } = enter(context, root, initial, root);
    start = {
      to: node.name,
      entered: entered.map((state) => state.name),
      cost: entered.reduce((sum, state) => addCost(sum, context.enterCost(state)), ZERO),
    };
  }
  return { root, nodes: nodes.map((node) => node.name), edges, start };
}
