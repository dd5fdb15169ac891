import { createActor, type AnyStateMachine, type AnyStateNode } from 'xstate';
import { microstepTransitions } from '../xstate-adapter.ts';
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

/**
 * The transitions a session of `machine` takes as it starts with `input` (`always` transitions out of its initial
 * states), as coverage keys. The log's first step names only the state they end in: they are taken while XState
 * computes the initial snapshot, before a session's actor can be listened to. Computing that snapshot runs no
 * entry actions and starts no calls.
 */
export function startTransitions(machine: AnyStateMachine, input: unknown): string[] {
  const keys: string[] = [];
  try {
    createActor(machine, {
      input,
      inspect: (event) => {
        if (event.type !== '@xstate.microstep' || event.actorRef.sessionId !== event.rootId) return;
        for (const t of microstepTransitions(event)) keys.push(transitionKey(t.source, t.event, t.targets));
      },
    });
  } catch {
    // a machine that throws while starting: the session's own log says so
  }
  return keys;
}

/**
 * Coverage of the machine by the given observed state values and transitions. The source of a transition taken was
 * active, so it counts as covered too (a state left at once by an `always` transition is in no logged state value).
 */
export function coverageOf(machine: AnyStateMachine, stateValues: Iterable<unknown>, transitions: Iterable<string>): Coverage {
  const inventory = machineInventory(machine);
  const seenStates = new Set<string>();
  for (const value of stateValues) for (const id of stateIdsOf(machine.id, value)) seenStates.add(id);
  const seenTransitions = new Set(transitions);
  for (const key of seenTransitions) seenStates.add(key.slice(0, key.indexOf('|')));
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
