import type { FlowSpec } from '@flowing/spec';
import { checkStateName } from './edit-states.ts';
import { refuse, type EditResult } from './errors.ts';
import { renameKey, toPointer } from './pointer.ts';
import { cloneSpec, forEachTransition, locateState } from './walk.ts';

/**
 * Renames a state and updates every reference to it: transition targets, the parent's (or machine's) `initial`,
 * and the layout keys of the state and its children.
 * @example renameState(spec, '/states/active/states/idle', 'waiting')
 */
export function renameState(spec: FlowSpec, pointer: string, newName: string): EditResult<FlowSpec> {
  const found = locateState(spec, pointer);
  if (!found) return refuse('GRAPH_UNKNOWN_ELEMENT', `no state at ${pointer}`);
  const oldName = found.name;
  if (newName === oldName) return { ok: true, spec, pointer };
  const bad = checkStateName(spec, newName, oldName);
  if (bad) return refuse(bad.code, bad.message);

  const next = cloneSpec(spec);
  const located = locateState(next, pointer)!;
  const renamed = renameKey(located.siblings, oldName, newName);
  if (located.parent) {
    located.parent.states = renamed;
    if (located.parent.initial === oldName) located.parent.initial = newName;
  } else {
    next.states = renamed;
    if (next.initial === oldName) next.initial = newName;
  }
  forEachTransition(next, (transition, replace) => {
    if (transition.target === oldName) replace({ ...transition, target: newName });
  });
  if (next.layout) {
    const oldPrefix = located.path.join('.');
    const newPrefix = [...located.path.slice(0, -1), newName].join('.');
    next.layout = Object.fromEntries(
      Object.entries(next.layout).map(([key, value]) => [
        key === oldPrefix ? newPrefix : key.startsWith(oldPrefix + '.') ? newPrefix + key.slice(oldPrefix.length) : key,
        value,
      ]),
    );
  }
  return { ok: true, spec: next, pointer: toPointer([...located.path.slice(0, -1), newName].flatMap((n) => ['states', n])) };
}
