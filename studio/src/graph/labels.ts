import type { TransitionObject } from '@flowing/spec';
import type { TransitionKind } from './types.ts';

/** The text drawn on a transition edge: `EVENT [guard]`, `done`, `error`, `after 8000ms` or `always`, with the guard in brackets. */
export function transitionLabel(kind: TransitionKind, key: string | undefined, transition: TransitionObject): string {
  const head = kind === 'on' ? key ?? ''
    : kind === 'after' ? `after ${key ?? '?'}ms`
    : kind === 'always' ? 'always'
    : kind === 'onError' ? 'error'
    : 'done';
  const guard = transition.guard === undefined ? ''
    : typeof transition.guard === 'string' ? ` [${transition.guard}]`
    : ` [${transition.guard.ref}]`;
  return head + guard;
}
