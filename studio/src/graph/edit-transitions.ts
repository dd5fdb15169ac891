import { EVENT_PATTERN, type FlowSpec, type TransitionObject, type TransitionSpec } from '@flowing/spec';
import { refuse, type EditResult } from './errors.ts';
import { getAt, parsePointer, setAt, toPointer } from './pointer.ts';
import type { TransitionEdgeData } from './types.ts';
import { locateState } from './walk.ts';

/** Where a new transition goes in its source state. */
export type TransitionPlace =
  | { kind: 'on'; event: string }
  | { kind: 'after'; delay: string }
  | { kind: 'always' }
  | { kind: 'done' }
  | { kind: 'onDone' }
  | { kind: 'onError' };

function sitePath(place: TransitionPlace): string[] {
  switch (place.kind) {
    case 'on':
      return ['on', place.event];
    case 'after':
      return ['after', place.delay];
    case 'always':
      return ['always'];
    case 'done':
      return ['onDone'];
    case 'onDone':
      return ['invoke', 'onDone'];
    case 'onError':
      return ['invoke', 'onError'];
  }
}

/** Writes a transition object back in the smallest form: a bare target string when that is all it has. */
function compact(transition: TransitionObject): TransitionSpec {
  const keys = Object.keys(transition).filter((k) => (transition as Record<string, unknown>)[k] !== undefined);
  return keys.length === 1 && keys[0] === 'target' ? transition.target! : transition;
}

/**
 * Adds a transition from a state: a new `on` event (declared in `events` when it is new), an `after` delay, or an
 * invoke outcome. An existing value at that place becomes a guarded list with the new transition last.
 */
export function addTransition(
  spec: FlowSpec,
  sourcePointer: string,
  place: TransitionPlace,
  transition: TransitionObject,
): EditResult<FlowSpec> {
  if (place.kind === 'on' && !EVENT_PATTERN.test(place.event)) {
    return refuse('GRAPH_INVALID_EVENT', `'${place.event}' is not a valid event name: use capitals, digits and _ (e.g. USER_MESSAGE)`);
  }
  if (place.kind === 'after' && !/^[1-9][0-9]*$/.test(place.delay)) {
    return refuse('GRAPH_INVALID_DELAY', `'${place.delay}' is not a delay: use a whole number of milliseconds (e.g. 5000)`);
  }
  if (!locateState(spec, sourcePointer)) return refuse('GRAPH_UNKNOWN_ELEMENT', `no state at ${sourcePointer}`);
  const site = [...parsePointer(sourcePointer), ...sitePath(place)];
  const existing = getAt(spec, site) as TransitionSpec | undefined;
  let next: FlowSpec;
  let pointer: string;
  if (existing === undefined) {
    next = setAt(spec, site, compact(transition));
    pointer = toPointer(site);
  } else {
    const list: TransitionObject[] =
      typeof existing === 'string' ? [{ target: existing }] : Array.isArray(existing) ? existing : [existing];
    next = setAt(spec, site, [...list, transition]);
    pointer = toPointer([...site, list.length]);
  }
  if (place.kind === 'on' && !(place.event in (next.events ?? {})))
    next = { ...next, events: { ...(next.events ?? {}), [place.event]: {} } };
  return { ok: true, spec: next, pointer };
}

/** Removes one transition; an emptied list, event or `on` map is removed too. */
export function deleteTransition(spec: FlowSpec, edge: Pick<TransitionEdgeData, 'sitePointer' | 'form' | 'index'>): EditResult<FlowSpec> {
  const value = getAt(spec, edge.sitePointer);
  if (value === undefined) return refuse('GRAPH_UNKNOWN_ELEMENT', `no transition at ${edge.sitePointer}`);
  let next: FlowSpec;
  if (edge.form === 'array' && Array.isArray(value) && value.length > 1) {
    const rest = value.filter((_, i) => i !== edge.index);
    next = setAt(spec, edge.sitePointer, rest);
  } else {
    next = setAt(spec, edge.sitePointer, undefined);
    const segments = parsePointer(edge.sitePointer);
    const holder = segments.slice(0, -1);
    const last = holder[holder.length - 1];
    if ((last === 'on' || last === 'after') && Object.keys((getAt(next, holder) as object) ?? {}).length === 0)
      next = setAt(next, holder, undefined);
  }
  return { ok: true, spec: next };
}

/** The transition at a pointer as an object (a bare string target becomes `{ target }`). */
export function readTransition(spec: FlowSpec, pointer: string): TransitionObject | undefined {
  const value = getAt(spec, pointer);
  if (typeof value === 'string') return { target: value };
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as TransitionObject;
  return undefined;
}

/** Changes fields of one transition (undefined removes a field), keeping its place and the shortest form. */
export function updateTransition(spec: FlowSpec, pointer: string, patch: Partial<TransitionObject>): EditResult<FlowSpec> {
  const current = readTransition(spec, pointer);
  if (!current) return refuse('GRAPH_UNKNOWN_ELEMENT', `no transition at ${pointer}`);
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    const empty =
      value === undefined ||
      value === '' ||
      (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) ||
      (Array.isArray(value) && value.length === 0);
    if (empty) delete merged[key];
    else merged[key] = value;
  }
  const inList = Array.isArray(getAt(spec, parsePointer(pointer).slice(0, -1)));
  return { ok: true, spec: setAt(spec, pointer, inList ? merged : compact(merged as TransitionObject)), pointer };
}

/** Moves an `on` transition to another event (declared when new); returns the transition's new pointer. */
export function changeTransitionEvent(
  spec: FlowSpec,
  edge: TransitionEdgeData,
  sourcePointer: string,
  event: string,
): EditResult<FlowSpec> {
  if (edge.kind !== 'on') return refuse('GRAPH_INVALID_EVENT', 'only event transitions have an event name');
  if (event === edge.key) return { ok: true, spec, pointer: edge.pointer };
  const transition = readTransition(spec, edge.pointer);
  if (!transition) return refuse('GRAPH_UNKNOWN_ELEMENT', `no transition at ${edge.pointer}`);
  if (!EVENT_PATTERN.test(event))
    return refuse('GRAPH_INVALID_EVENT', `'${event}' is not a valid event name: use capitals, digits and _ (e.g. USER_MESSAGE)`);
  const removed = deleteTransition(spec, edge);
  if (!removed.ok) return removed;
  return addTransition(removed.spec, sourcePointer, { kind: 'on', event }, transition);
}

/** Moves an `after` transition to another delay (in milliseconds). */
export function changeTransitionDelay(
  spec: FlowSpec,
  edge: TransitionEdgeData,
  sourcePointer: string,
  delay: string,
): EditResult<FlowSpec> {
  if (edge.kind !== 'after' || delay === edge.key) return { ok: true, spec, pointer: edge.pointer };
  const transition = readTransition(spec, edge.pointer);
  if (!transition) return refuse('GRAPH_UNKNOWN_ELEMENT', `no transition at ${edge.pointer}`);
  const removed = deleteTransition(spec, edge);
  if (!removed.ok) return removed;
  return addTransition(removed.spec, sourcePointer, { kind: 'after', delay }, transition);
}

/** Sets the target of the first transition at an invoke outcome, creating it when missing. */
export function setOutcomeTarget(
  spec: FlowSpec,
  statePointer: string,
  outcome: 'onDone' | 'onError',
  target: string | undefined,
): FlowSpec {
  const site = [...parsePointer(statePointer), 'invoke', outcome];
  const existing = getAt(spec, site) as TransitionSpec | undefined;
  if (target === undefined) return setAt(spec, site, undefined);
  if (existing === undefined || typeof existing === 'string') return setAt(spec, site, target);
  if (Array.isArray(existing)) return setAt(spec, [...site, String(existing.length - 1), 'target'], target);
  return setAt(spec, [...site, 'target'], target);
}
