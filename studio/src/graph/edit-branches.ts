import type { FlowSpec, TransitionObject } from '@flowing/spec';
import { refuse, type EditResult } from './errors.ts';
import { getAt, parsePointer, setAt, toPointer } from './pointer.ts';

/** The list a branch pointer (`.../onDone/1`) belongs to, with the branch's index in it. */
function branchSite(spec: FlowSpec, pointer: string): { site: string[]; list: TransitionObject[]; index: number } | undefined {
  const segments = parsePointer(pointer);
  const index = Number(segments[segments.length - 1]);
  const site = segments.slice(0, -1);
  const list = getAt(spec, site);
  if (!Array.isArray(list) || !Number.isInteger(index) || index < 0 || index >= list.length) return undefined;
  return { site, list: list as TransitionObject[], index };
}

/**
 * Moves a branch of a guarded list (first match wins) to another position; returns the branch's new pointer.
 * @example moveBranch(spec, '/states/lookup/invoke/onDone/1', 0)
 */
export function moveBranch(spec: FlowSpec, pointer: string, to: number): EditResult<FlowSpec> {
  const found = branchSite(spec, pointer);
  if (!found) return refuse('GRAPH_UNKNOWN_ELEMENT', `no branch of a guarded list at ${pointer}`);
  const { site, list, index } = found;
  const target = Math.max(0, Math.min(list.length - 1, to));
  if (target === index) return { ok: true, spec, pointer };
  const next = [...list];
  const [moved] = next.splice(index, 1);
  next.splice(target, 0, moved!);
  return { ok: true, spec: setAt(spec, site, next), pointer: toPointer([...site, target]) };
}

/**
 * Makes a branch the fallback of its list: its guard is dropped and it moves to the end, so it is taken when no
 * guard before it holds. A single transition (not a list) only loses its guard.
 */
export function markFallback(spec: FlowSpec, pointer: string): EditResult<FlowSpec> {
  const found = branchSite(spec, pointer);
  if (!found) {
    const single = getAt(spec, pointer);
    if (!single || typeof single !== 'object' || Array.isArray(single))
      return refuse('GRAPH_UNKNOWN_ELEMENT', `no transition at ${pointer}`);
    const { guard: _dropped, ...rest } = single as TransitionObject;
    return { ok: true, spec: setAt(spec, pointer, rest), pointer };
  }
  const { site, list, index } = found;
  const { guard: _dropped, ...rest } = list[index]!;
  const next = [...list.slice(0, index), ...list.slice(index + 1), rest];
  return { ok: true, spec: setAt(spec, site, next), pointer: toPointer([...site, next.length - 1]) };
}
