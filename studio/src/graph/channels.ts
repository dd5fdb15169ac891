import { emitSites, type FlowSpec } from '@flowing/spec';

/** One message a state sends: its channel, and where in the state the `emit` is written (`entry`, `on ASK`, ...). */
export interface StateEmit {
  channel: string;
  where: string;
}

const cache = new WeakMap<object, ReadonlyMap<string, readonly StateEmit[]>>();

/**
 * The channels each state emits on (in its entry or exit, or on a transition leaving it), by state path (`a.b`, the
 * layout key). Computed once per spec object, so a node reading its own entry gets the same array until the spec
 * changes.
 * @example emitsByState(spec).get('idle') // [{ channel: 'billing.need_order', where: 'on ASK_BILLING' }]
 */
export function emitsByState(spec: Pick<FlowSpec, 'states'>): ReadonlyMap<string, readonly StateEmit[]> {
  const known = cache.get(spec);
  if (known) return known;
  const byState = new Map<string, StateEmit[]>();
  for (const { emit, at } of emitSites(spec)) {
    const path: string[] = [];
    let i = 0;
    for (; at[i] === 'states' && typeof at[i + 1] === 'string'; i += 2) path.push(at[i + 1] as string);
    const where = at
      .slice(i, at.lastIndexOf('emit'))
      .filter((segment) => typeof segment === 'string' && !/^\d+$/.test(segment))
      .join(' ');
    const key = path.join('.');
    const list = byState.get(key) ?? [];
    list.push({ channel: emit.channel, where });
    byState.set(key, list);
  }
  cache.set(spec, byState);
  return byState;
}

/** The distinct channel names of a state's emits, in the order written. */
export function channelNames(emits: readonly StateEmit[]): string[] {
  return [...new Set(emits.map((e) => e.channel))];
}
