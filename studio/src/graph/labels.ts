import type { TransitionObject } from '@flowing/spec';
import type { TransitionKind } from './types.ts';

/** Longest guard shown on an edge label before it is elided (the full text is in the label's tooltip). */
export const GUARD_LABEL_MAX = 34;

/** Where a transition stands in a guarded list: its 1-based order, the list length, and whether it is the fallback. */
export interface BranchOrder {
  order: number;
  of: number;
  /** The last branch without a guard: taken when no guard before it holds. */
  fallback: boolean;
}

function head(kind: TransitionKind, key: string | undefined): string {
  switch (kind) {
    case 'on':
      return key ?? '';
    case 'after':
      return `after ${key ?? '?'}ms`;
    case 'always':
      return 'always';
    case 'onError':
      return 'error';
    default:
      return 'done';
  }
}

function guardText(transition: TransitionObject): string | undefined {
  if (transition.guard === undefined) return undefined;
  return typeof transition.guard === 'string' ? transition.guard : transition.guard.ref;
}

/** The text drawn on a transition edge on one line: `EVENT [guard]`, `done`, `error`, `after 8000ms` or `always`. */
export function transitionLabel(kind: TransitionKind, key: string | undefined, transition: TransitionObject): string {
  const guard = guardText(transition);
  return head(kind, key) + (guard === undefined ? '' : ` [${guard}]`);
}

/** Shortens text to `max` characters, ending with an ellipsis when something was cut. */
export function elide(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(1, max - 1))}…`;
}

/**
 * The lines drawn on an edge label: the kind (with the branch order and a fallback mark in guarded lists), then the
 * guard on its own line, elided to `GUARD_LABEL_MAX` characters; `full` is the whole text for the tooltip.
 * @example labelLines('onDone', undefined, { guard: 'output.total <= 100', target: 'approved' }, { order: 1, of: 2, fallback: false })
 * // { lines: ['done #1', '[output.total <= 100]'], full: 'done #1 [output.total <= 100]' }
 */
export function labelLines(
  kind: TransitionKind,
  key: string | undefined,
  transition: TransitionObject,
  branch?: BranchOrder,
): { lines: string[]; full: string } {
  let first = head(kind, key) || '(no event)';
  if (branch && branch.of > 1) first += ` #${branch.order}`;
  if (branch?.fallback) first += ' · fallback';
  if (transition.target === undefined) first += ' (stays)';
  const guard = guardText(transition);
  const lines = guard === undefined ? [first] : [first, `[${elide(guard, GUARD_LABEL_MAX - 2)}]`];
  return { lines, full: guard === undefined ? first : `${first} [${guard}]` };
}

/** The order of each transition in a list written at one place; the fallback is the last one without a guard. */
export function branchOrder(list: readonly TransitionObject[], index: number): BranchOrder {
  const last = list.length - 1;
  return { order: index + 1, of: list.length, fallback: list.length > 1 && index === last && list[last]!.guard === undefined };
}
