import type { RuntimeMachine, SessionSummary } from '@flowing/protocol';
import { listStates, machineInvokes, type FlowSpec } from '@flowing/spec';

/**
 * The machines whose sessions can be children (or grandchildren) of `machineId`'s sessions, from the specs the
 * runtime serves: every machine a machine invoke leads to, transitively. A machine without a served spec adds none.
 */
export function descendantMachines(machineId: string, machines: readonly RuntimeMachine[]): string[] {
  const specs = new Map(machines.map((m) => [m.id, m.spec as FlowSpec | null]));
  const found = new Set<string>();
  const visit = (id: string) => {
    const spec = specs.get(id);
    if (!spec?.states) return;
    for (const { invoke } of machineInvokes(listStates(spec))) {
      if (found.has(invoke.machine) || invoke.machine === machineId) continue;
      found.add(invoke.machine);
      visit(invoke.machine);
    }
  };
  visit(machineId);
  return [...found].sort();
}

/**
 * The sessions list as a tree, flattened: each listed session followed by its child sessions (and theirs), in the
 * order each list gave them (newest first). `listed` are the sessions the list is of (the open machine's, or every
 * machine's); `children` may hold sessions of other machines, of which only those whose parent is shown are kept. A
 * listed session whose parent is shown is nested under it; any other listed session stays at the top.
 * @example nestSessions([desk], [billingChildOfDesk, billingChildOfAnother]) // [desk, billingChildOfDesk]
 */
export function nestSessions(listed: readonly SessionSummary[], children: readonly SessionSummary[] = []): SessionSummary[] {
  const all = new Map<string, SessionSummary>();
  for (const s of [...listed, ...children]) if (!all.has(s.sessionId)) all.set(s.sessionId, s);
  const byParent = new Map<string, SessionSummary[]>();
  for (const s of all.values()) {
    if (s.parentId === undefined || !all.has(s.parentId)) continue;
    const siblings = byParent.get(s.parentId) ?? [];
    siblings.push(s);
    byParent.set(s.parentId, siblings);
  }
  const out: SessionSummary[] = [];
  const seen = new Set<string>();
  const add = (s: SessionSummary) => {
    if (seen.has(s.sessionId)) return;
    seen.add(s.sessionId);
    out.push(s);
    for (const child of byParent.get(s.sessionId) ?? []) add(child);
  };
  for (const s of listed) if (s.parentId === undefined || !all.has(s.parentId)) add(s);
  // A listed session under a parent that is itself only a child of nothing shown: at the top rather than lost.
  for (const s of listed) add(s);
  return out;
}

/** How deep each session of a nested list sits (0 at the top), from the parent ids of the sessions before it. */
export function nestingDepths(sessions: readonly SessionSummary[]): number[] {
  const depthOf = new Map<string, number>();
  return sessions.map((s) => {
    const parentDepth = s.parentId === undefined ? undefined : depthOf.get(s.parentId);
    const depth = parentDepth === undefined ? 0 : parentDepth + 1;
    depthOf.set(s.sessionId, depth);
    return depth;
  });
}
