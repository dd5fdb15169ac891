import type { FlowSpec, StateSpec, StateType, TransitionObject, TransitionSpec } from './schema.ts';

/** A state found in a spec, with where it lives. */
export interface StateEntry {
  name: string;
  /** Names from the root's child down to this state. */
  path: string[];
  /** JSON pointer segments to this state object (`states`, name, `states`, name, ...). */
  pointer: string[];
  spec: StateSpec;
  parent: StateEntry | undefined;
  type: StateType;
}

export function stateType(state: StateSpec): StateType {
  return state.type ?? (state.states && Object.keys(state.states).length > 0 ? 'compound' : 'atomic');
}

/** Every state of a spec, depth first, parents before children, in document order. */
export function listStates(spec: Pick<FlowSpec, 'states'>): StateEntry[] {
  const out: StateEntry[] = [];
  const visit = (states: Record<string, StateSpec>, parent: StateEntry | undefined) => {
    for (const [name, state] of Object.entries(states)) {
      const entry: StateEntry = {
        name,
        path: parent ? [...parent.path, name] : [name],
        pointer: parent ? [...parent.pointer, 'states', name] : ['states', name],
        spec: state,
        parent,
        type: stateType(state),
      };
      out.push(entry);
      if (state.states) visit(state.states, entry);
    }
  };
  visit(spec.states, undefined);
  return out;
}

/** Where a transition list sits in a state, which roots its expressions see, and the event it handles. */
export interface TransitionSite {
  /** `on`, `after`, `always`, `onDone` or `onError`. */
  kind: 'on' | 'after' | 'always' | 'onDone' | 'onError' | 'done';
  /** The event name (`on`) or delay (`after`). */
  key?: string;
  /** JSON pointer segments from the state to the transition value. */
  pointer: string[];
  transitions: NormalizedTransition[];
}

/** One transition as an object, with the pointer segments of the transition and of its target value. */
export interface NormalizedTransition {
  transition: TransitionObject;
  pointer: string[];
  /** Where the target is written: the transition itself for the `"state"` shorthand, else its `target` field. */
  targetPointer: string[];
}

/** Normalises a transition value to a list of transition objects with their pointer segments. */
export function normalizeTransition(value: TransitionSpec, base: string[]): NormalizedTransition[] {
  if (typeof value === 'string') return [{ transition: { target: value }, pointer: base, targetPointer: base }];
  if (Array.isArray(value))
    return value.map((t, i) => ({ transition: t, pointer: [...base, String(i)], targetPointer: [...base, String(i), 'target'] }));
  return [{ transition: value, pointer: base, targetPointer: [...base, 'target'] }];
}

/** Every transition site of one state. */
export function transitionSites(state: StateSpec): TransitionSite[] {
  const sites: TransitionSite[] = [];
  for (const [event, value] of Object.entries(state.on ?? {})) {
    sites.push({ kind: 'on', key: event, pointer: ['on', event], transitions: normalizeTransition(value, ['on', event]) });
  }
  for (const [delay, value] of Object.entries(state.after ?? {})) {
    sites.push({ kind: 'after', key: delay, pointer: ['after', delay], transitions: normalizeTransition(value, ['after', delay]) });
  }
  if (state.always !== undefined) {
    sites.push({ kind: 'always', pointer: ['always'], transitions: normalizeTransition(state.always, ['always']) });
  }
  if (state.onDone !== undefined) {
    sites.push({ kind: 'done', pointer: ['onDone'], transitions: normalizeTransition(state.onDone, ['onDone']) });
  }
  if (state.invoke?.onDone !== undefined) {
    sites.push({
      kind: 'onDone',
      pointer: ['invoke', 'onDone'],
      transitions: normalizeTransition(state.invoke.onDone, ['invoke', 'onDone']),
    });
  }
  if (state.invoke?.onError !== undefined) {
    sites.push({
      kind: 'onError',
      pointer: ['invoke', 'onError'],
      transitions: normalizeTransition(state.invoke.onError, ['invoke', 'onError']),
    });
  }
  return sites;
}
