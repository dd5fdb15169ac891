import { NAME_PATTERN, RESERVED_NAMES, type FlowSpec, type Position, type StateSpec } from '@flowing/spec';
import { refuse, type EditResult } from './errors.ts';
import { toPointer } from './pointer.ts';
import { allStateNames, cloneSpec, forEachTransition, locateState } from './walk.ts';

/** Checks a new state name: an identifier, not reserved, not used by another state. Returns a message or undefined. */
export function checkStateName(
  spec: FlowSpec,
  name: string,
  ignore?: string,
): { code: 'GRAPH_INVALID_NAME' | 'GRAPH_DUPLICATE_NAME'; message: string } | undefined {
  if (!NAME_PATTERN.test(name) || name.length > 64 || RESERVED_NAMES.has(name)) {
    return {
      code: 'GRAPH_INVALID_NAME',
      message: `'${name}' is not a valid state name: use letters, digits and _ (not starting with a digit)`,
    };
  }
  if (name !== ignore && allStateNames(spec).includes(name)) {
    return { code: 'GRAPH_DUPLICATE_NAME', message: `a state named '${name}' already exists; state names are unique across the machine` };
  }
  return undefined;
}

/** A state name not used yet: `state_1`, `state_2`, ... */
export function freshStateName(spec: FlowSpec, base = 'state'): string {
  const used = new Set(allStateNames(spec));
  for (let i = 1; ; i++) if (!used.has(`${base}_${i}`)) return `${base}_${i}`;
}

/** Adds an atomic state under `parentPointer` (or at the top level) at a position relative to its parent. */
export function addState(
  spec: FlowSpec,
  options: { name: string; parentPointer?: string; position: { x: number; y: number } },
): EditResult<FlowSpec> {
  const bad = checkStateName(spec, options.name);
  if (bad) return refuse(bad.code, bad.message);
  const next = cloneSpec(spec);
  let path: string[];
  if (options.parentPointer) {
    const parent = locateState(next, options.parentPointer);
    if (!parent) return refuse('GRAPH_UNKNOWN_ELEMENT', `no state at ${options.parentPointer}`);
    parent.state.states = { ...(parent.state.states ?? {}), [options.name]: {} };
    if (parent.state.type !== 'parallel' && parent.state.initial === undefined) parent.state.initial = options.name;
    path = [...parent.path, options.name];
  } else {
    next.states = { ...next.states, [options.name]: {} };
    if (next.initial === undefined) next.initial = options.name;
    path = [options.name];
  }
  next.layout = { ...(next.layout ?? {}), [path.join('.')]: { x: Math.round(options.position.x), y: Math.round(options.position.y) } };
  return { ok: true, spec: next, pointer: toPointer(path.flatMap((n) => ['states', n])) };
}

/** Removes a state with its children, the transitions that lead into them and their layout entries. */
export function deleteState(spec: FlowSpec, pointer: string): EditResult<FlowSpec> {
  const next = cloneSpec(spec);
  const found = locateState(next, pointer);
  if (!found) return refuse('GRAPH_UNKNOWN_ELEMENT', `no state at ${pointer}`);
  const removed = new Set<string>();
  const collect = (name: string, state: StateSpec) => {
    removed.add(name);
    for (const [child, childState] of Object.entries(state.states ?? {})) collect(child, childState);
  };
  collect(found.name, found.state);
  delete found.siblings[found.name];
  const remaining = Object.keys(found.siblings);
  if (found.parent) {
    if (found.parent.initial === found.name) {
      if (remaining.length > 0) found.parent.initial = remaining[0];
      else delete found.parent.initial;
    }
    if (remaining.length === 0) delete found.parent.states;
  } else if (next.initial === found.name) {
    if (remaining.length > 0) next.initial = remaining[0];
    else delete next.initial;
  }
  forEachTransition(next, (transition, replace) => {
    if (transition.target !== undefined && removed.has(transition.target)) replace(undefined);
  });
  if (next.layout) {
    const prefix = found.path.join('.');
    next.layout = Object.fromEntries(Object.entries(next.layout).filter(([key]) => key !== prefix && !key.startsWith(prefix + '.')));
  }
  return { ok: true, spec: next };
}

/** Saves a state's position (relative to its parent) and, for compound states, its size. */
export function setStateLayout(spec: FlowSpec, layoutKey: string, position: Position): FlowSpec {
  const rounded: Position = { x: Math.round(position.x), y: Math.round(position.y) };
  if (position.width !== undefined) rounded.width = Math.round(position.width);
  if (position.height !== undefined) rounded.height = Math.round(position.height);
  return { ...spec, layout: { ...(spec.layout ?? {}), [layoutKey]: rounded } };
}

/** Replaces every layout entry at once (after an auto-layout). */
export function replaceLayout(spec: FlowSpec, layout: Record<string, Position>): FlowSpec {
  return { ...spec, layout };
}
