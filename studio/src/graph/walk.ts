import type { FlowSpec, StateSpec, TransitionObject, TransitionSpec } from '@flowing/spec';
import { parsePointer } from './pointer.ts';

/** Calls `visit` for every transition object of every state (mutable: the spec must be a private copy). */
export function forEachTransition(
  spec: FlowSpec,
  visit: (transition: TransitionObject, replace: (next: TransitionObject | undefined) => void) => void,
) {
  const asString = (next: TransitionObject) => (Object.keys(next).length === 1 && next.target !== undefined ? next.target : next);
  const visitValue = (holder: Record<string, unknown>, key: string) => {
    const value = holder[key] as TransitionSpec | undefined;
    if (value === undefined) return;
    if (typeof value === 'string') {
      visit({ target: value }, (next) => {
        if (next === undefined) delete holder[key];
        else holder[key] = asString(next);
      });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        visit(value[i]!, (next) => {
          if (next === undefined) value.splice(i, 1);
          else value[i] = next;
        });
      }
      if (value.length === 0) delete holder[key];
    } else
      visit(value, (next) => {
        if (next === undefined) delete holder[key];
        else holder[key] = next;
      });
  };
  const visitState = (state: StateSpec) => {
    for (const mapKey of ['on', 'after'] as const) {
      const map = state[mapKey] as Record<string, unknown> | undefined;
      if (!map) continue;
      for (const key of Object.keys(map)) visitValue(map, key);
      if (Object.keys(map).length === 0) delete state[mapKey];
    }
    visitValue(state as Record<string, unknown>, 'always');
    visitValue(state as Record<string, unknown>, 'onDone');
    if (state.invoke) {
      visitValue(state.invoke as Record<string, unknown>, 'onDone');
      visitValue(state.invoke as Record<string, unknown>, 'onError');
    }
    for (const child of Object.values(state.states ?? {})) visitState(child);
  };
  for (const state of Object.values(spec.states ?? {})) visitState(state);
}

/** Finds the state object a pointer names, with its parent's `states` map and its name. */
export function locateState(
  spec: FlowSpec,
  pointer: string,
): { state: StateSpec; siblings: Record<string, StateSpec>; parent: StateSpec | undefined; name: string; path: string[] } | undefined {
  const segments = parsePointer(pointer);
  if (segments.length < 2 || segments.length % 2 !== 0) return undefined;
  let siblings: Record<string, StateSpec> | undefined = spec.states;
  let parent: StateSpec | undefined;
  let state: StateSpec | undefined;
  const path: string[] = [];
  for (let i = 0; i < segments.length; i += 2) {
    if (segments[i] !== 'states' || !siblings) return undefined;
    const name = segments[i + 1]!;
    if (!Object.hasOwn(siblings, name)) return undefined;
    if (i > 0) parent = state;
    state = siblings[name];
    path.push(name);
    if (i + 2 < segments.length) siblings = state?.states;
  }
  if (!state || !siblings) return undefined;
  return { state, siblings, parent, name: path[path.length - 1]!, path };
}

/** Every state name in the spec. */
export function allStateNames(spec: FlowSpec): string[] {
  const names: string[] = [];
  const visit = (states: Record<string, StateSpec> | undefined) => {
    for (const [name, state] of Object.entries(states ?? {})) {
      names.push(name);
      visit(state.states);
    }
  };
  visit(spec.states);
  return names;
}

/** Deep copy of a spec, to edit in place. */
export function cloneSpec<T>(spec: T): T {
  return structuredClone(spec);
}
