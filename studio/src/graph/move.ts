import { stateType, type FlowSpec, type StateSpec } from '@flowing/spec';
import { refuse, type EditResult } from './errors.ts';
import { isWithin, toPointer } from './pointer.ts';
import { cloneSpec, locateState } from './walk.ts';

/**
 * Moves a state (with its children) into a compound or parallel state, or to the top level when `parentPointer`
 * is undefined. Names are unique across the machine, so no transition changes; `initial` and layout keys follow.
 * @example moveState(spec, '/states/refund', '/states/active', { x: 40, y: 60 })
 */
export function moveState(
  spec: FlowSpec,
  pointer: string,
  parentPointer: string | undefined,
  position: { x: number; y: number },
): EditResult<FlowSpec> {
  const found = locateState(spec, pointer);
  if (!found) return refuse('GRAPH_UNKNOWN_ELEMENT', `no state at ${pointer}`);
  if (parentPointer !== undefined && isWithin(parentPointer, pointer)) {
    return refuse('GRAPH_BAD_MOVE', `'${found.name}' cannot move into itself or one of its own children`);
  }
  const currentParent = toPointer(found.path.slice(0, -1).flatMap((n) => ['states', n]));
  if ((parentPointer ?? '') === currentParent) return { ok: true, spec, pointer };
  if (parentPointer !== undefined) {
    const target = locateState(spec, parentPointer);
    if (!target) return refuse('GRAPH_UNKNOWN_ELEMENT', `no state at ${parentPointer}`);
    const type = stateType(target.state);
    if (type !== 'compound' && type !== 'parallel') {
      return refuse('GRAPH_BAD_MOVE', `'${target.name}' is a ${type} state; states can only move into compound or parallel states`);
    }
  }

  const next = cloneSpec(spec);
  const from = locateState(next, pointer)!;
  const moving: StateSpec = from.state;
  delete from.siblings[from.name];
  const remaining = Object.keys(from.siblings);
  const holder: { initial?: string; states?: Record<string, StateSpec> } = from.parent ?? next;
  if (holder.initial === from.name) {
    if (remaining.length > 0) holder.initial = remaining[0];
    else delete holder.initial;
  }
  if (from.parent && remaining.length === 0) delete from.parent.states;

  let newPath: string[];
  if (parentPointer === undefined) {
    next.states = { ...next.states, [from.name]: moving };
    if (next.initial === undefined) next.initial = from.name;
    newPath = [from.name];
  } else {
    const to = locateState(next, parentPointer)!;
    to.state.states = { ...(to.state.states ?? {}), [from.name]: moving };
    if (stateType(to.state) !== 'parallel' && to.state.initial === undefined) to.state.initial = from.name;
    newPath = [...to.path, from.name];
  }

  const oldPrefix = from.path.join('.');
  const newPrefix = newPath.join('.');
  const layout: NonNullable<FlowSpec['layout']> = {};
  for (const [key, value] of Object.entries(next.layout ?? {})) {
    if (key === oldPrefix) continue;
    layout[key.startsWith(oldPrefix + '.') ? newPrefix + key.slice(oldPrefix.length) : key] = value;
  }
  const old = next.layout?.[oldPrefix];
  layout[newPrefix] = { ...(old ?? {}), x: Math.round(position.x), y: Math.round(position.y) };
  next.layout = layout;
  return { ok: true, spec: next, pointer: toPointer(newPath.flatMap((n) => ['states', n])) };
}
