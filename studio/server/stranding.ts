import type { MachineStateCounts } from '@flowing/protocol';

/** Sessions of the connected runtime that wait in a state an edit removes. */
export interface StrandedState {
  /** The dotted state path (`active.await_approval`). */
  state: string;
  sessions: number;
}

/** Asks the connected runtime how many sessions are in each active state path of a machine; undefined when it cannot say. */
export type RuntimeStateCounts = (machineId: string) => Promise<MachineStateCounts | undefined>;

/** Every state path of a spec (compound states and their children), dotted. */
export function specStatePaths(spec: unknown, prefix = ''): Set<string> {
  const out = new Set<string>();
  const states = (spec as { states?: unknown } | null)?.states;
  if (!states || typeof states !== 'object') return out;
  for (const [key, child] of Object.entries(states)) {
    const path = `${prefix}${key}`;
    out.add(path);
    for (const below of specStatePaths(child, `${path}.`)) out.add(below);
  }
  return out;
}

/**
 * The states the edit from `before` to `after` removes in which sessions of the connected runtime still wait, with
 * how many; empty when nothing is removed or the runtime cannot say (none connected, the machine not served).
 */
export async function strandedBy(
  machineId: string,
  before: unknown,
  after: unknown,
  counts: RuntimeStateCounts | undefined,
): Promise<StrandedState[]> {
  if (!counts || before === undefined) return [];
  const kept = specStatePaths(after);
  const removed = [...specStatePaths(before)].filter((path) => !kept.has(path));
  if (removed.length === 0) return [];
  let served: MachineStateCounts | undefined;
  try {
    served = await counts(machineId);
  } catch {
    // A warning is a courtesy: a runtime that is down or does not serve the machine never blocks a save.
    return [];
  }
  if (!served) return [];
  const stranded: StrandedState[] = [];
  for (const [state, sessions] of Object.entries(served.states)) {
    if (sessions > 0 && removed.some((path) => state === path || state.startsWith(`${path}.`))) stranded.push({ state, sessions });
  }
  return stranded.sort((a, b) => a.state.localeCompare(b.state));
}

/** "3 waiting sessions are in `await_approval`, which this edit removes" (one clause per state). */
export function strandingWarning(stranded: readonly StrandedState[]): string | undefined {
  if (stranded.length === 0) return undefined;
  const clauses = stranded.map(({ state, sessions }) => {
    const name = state.split('.').at(-1);
    return `${sessions} waiting session${sessions === 1 ? ' is' : 's are'} in \`${name}\``;
  });
  const which = stranded.length === 1 ? 'which this edit removes' : 'states this edit removes';
  return `${clauses.join(', ')}, ${which}: once the machine is regenerated and served, they are listed by \`flowing sessions --stale\` (a \`migrate\` hook in the machine's .impl.ts can carry them over)`;
}
