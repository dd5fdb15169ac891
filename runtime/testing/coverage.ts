import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { transitionKey } from './observe.ts';

/** State and transition coverage of one machine. */
export interface Coverage {
  states: { covered: number; total: number; missed: string[] };
  transitions: { covered: number; total: number; missed: string[] };
}

/** Every state node id (the root excluded) and every transition (`source|event|targets`) of a machine. */
export function machineInventory(machine: AnyStateMachine): { states: string[]; transitions: string[] } {
  const states: string[] = [];
  const transitions = new Set<string>();
  const visit = (node: AnyStateNode) => {
    if (node !== machine.root) states.push(node.id);
    for (const list of node.transitions.values())
      for (const t of list)
        transitions.add(
          transitionKey(
            t.source.id,
            t.eventType,
            (t.target ?? []).map((n: AnyStateNode) => n.id),
          ),
        );
    for (const t of node.always ?? [])
      transitions.add(
        transitionKey(
          t.source.id,
          t.eventType,
          (t.target ?? []).map((n: AnyStateNode) => n.id),
        ),
      );
    for (const child of Object.values(node.states)) visit(child as AnyStateNode);
  };
  visit(machine.root);
  return { states, transitions: [...transitions] };
}

/** The ids of the state nodes active in a state value (`{ active: 'idle' }` -> `m.active`, `m.active.idle`). */
export function stateIdsOf(machineId: string, value: unknown): string[] {
  const ids: string[] = [];
  const walk = (v: unknown, prefix: string) => {
    if (typeof v === 'string') ids.push(`${prefix}.${v}`);
    else if (v && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        ids.push(`${prefix}.${key}`);
        walk(child, `${prefix}.${key}`);
      }
    }
  };
  walk(value, machineId);
  return ids;
}

/** Coverage of the machine by the given observed state values and transitions. */
export function coverageOf(machine: AnyStateMachine, stateValues: Iterable<unknown>, transitions: Iterable<string>): Coverage {
  const inventory = machineInventory(machine);
  const seenStates = new Set<string>();
  for (const value of stateValues) for (const id of stateIdsOf(machine.id, value)) seenStates.add(id);
  const seenTransitions = new Set(transitions);
  const missedStates = inventory.states.filter((id) => !seenStates.has(id));
  const missedTransitions = inventory.transitions.filter((key) => !seenTransitions.has(key));
  return {
    states: { covered: inventory.states.length - missedStates.length, total: inventory.states.length, missed: missedStates },
    transitions: {
      covered: inventory.transitions.length - missedTransitions.length,
      total: inventory.transitions.length,
      missed: missedTransitions,
    },
  };
}
