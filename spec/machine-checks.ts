import { isRequiredInput } from './fields.ts';
import type { Report } from './graph-checks.ts';
import type { FlowSpec, MachineInvokeSpec } from './schema.ts';
import type { StateEntry } from './walk.ts';

/** The machine invokes of a spec: the state, where its invoke sits, and the invoke. */
export function machineInvokes(states: readonly StateEntry[]): Array<{ entry: StateEntry; invoke: MachineInvokeSpec }> {
  const out: Array<{ entry: StateEntry; invoke: MachineInvokeSpec }> = [];
  for (const entry of states) {
    const invoke = entry.spec.invoke;
    if (invoke && 'machine' in invoke) out.push({ entry, invoke });
  }
  return out;
}

/**
 * A machine invoke against the project's machines: the machine exists, every input field is a context field of the
 * child, every required child field is mapped, and the invoke does not lead back to this machine through its
 * children. A cycle is always refused: nothing in a spec bounds how deep it would recurse (the runtime's depth limit
 * would end it at run time, with an error instead of an answer).
 */
export function checkMachineInvoke(
  spec: FlowSpec,
  invoke: MachineInvokeSpec,
  at: Array<string | number>,
  machines: Readonly<Record<string, FlowSpec>>,
  report: Report,
): void {
  const child = Object.hasOwn(machines, invoke.machine) ? machines[invoke.machine] : invoke.machine === spec.id ? spec : undefined;
  if (!child) {
    const known = Object.keys(machines).sort().join(', ') || 'none';
    report('SPEC_UNKNOWN_MACHINE', [...at, 'machine'], `machine '${invoke.machine}' is not a machine of this project (known: ${known})`);
    return;
  }
  for (const field of Object.keys(invoke.input ?? {})) {
    if (!Object.hasOwn(child.context, field))
      report(
        'SPEC_UNKNOWN_MACHINE_INPUT',
        [...at, 'input', field],
        `machine '${child.id}' has no context field '${field}' (it has: ${Object.keys(child.context).join(', ') || 'none'})`,
      );
  }
  for (const [field, type] of Object.entries(child.context)) {
    if (isRequiredInput(type) && !Object.hasOwn(invoke.input ?? {}, field))
      report('SPEC_MISSING_MACHINE_INPUT', [...at, 'input'], `machine '${child.id}' needs context field '${field}'; map it in "input"`);
  }
  const cycle = cycleThrough(spec, invoke.machine, machines);
  if (cycle)
    report(
      'SPEC_MACHINE_CYCLE',
      [...at, 'machine'],
      `machine invokes form a cycle: ${cycle.map((id) => `'${id}'`).join(' -> ')}; a machine cannot invoke itself, directly or through its children`,
    );
}

/** The path `spec.id -> first -> ... -> spec.id` when invoking `first` leads back to this machine, else undefined. */
function cycleThrough(spec: FlowSpec, first: string, machines: Readonly<Record<string, FlowSpec>>): string[] | undefined {
  const childrenOf = (id: string): string[] => {
    const machine = id === spec.id ? spec : Object.hasOwn(machines, id) ? machines[id] : undefined;
    if (!machine) return [];
    const out: string[] = [];
    const visit = (states: FlowSpec['states']) => {
      for (const state of Object.values(states)) {
        if (state.invoke && 'machine' in state.invoke) out.push(state.invoke.machine);
        if (state.states) visit(state.states);
      }
    };
    visit(machine.states);
    return out;
  };
  const seen = new Set<string>();
  const walk = (id: string, path: string[]): string[] | undefined => {
    if (id === spec.id) return [...path, id];
    if (seen.has(id)) return undefined;
    seen.add(id);
    for (const next of childrenOf(id)) {
      const found = walk(next, [...path, id]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(first, [spec.id]);
}

/**
 * What a machine returns: `output` only on top-level final states, each field declared in the machine's `output`
 * and every required declared field given.
 */
export function checkOutputs(spec: FlowSpec, states: readonly StateEntry[], report: Report): void {
  const declared = spec.output ?? {};
  for (const entry of states) {
    const output = entry.spec.output;
    const topFinal = entry.type === 'final' && !entry.parent;
    if (output !== undefined && !topFinal) {
      report('SPEC_INVALID_STATE_SHAPE', [...entry.pointer, 'output'], 'only top-level final states return an `output`');
      continue;
    }
    if (!topFinal) continue;
    for (const field of Object.keys(output ?? {})) {
      if (!Object.hasOwn(declared, field))
        report(
          'SPEC_UNKNOWN_OUTPUT_FIELD',
          [...entry.pointer, 'output', field],
          `output field '${field}' is not declared in the machine's "output" (declared: ${Object.keys(declared).join(', ') || 'none'})`,
        );
    }
    for (const [field, type] of Object.entries(declared)) {
      if (!type.optional && !Object.hasOwn(output ?? {}, field))
        report(
          'SPEC_MISSING_OUTPUT',
          [...entry.pointer, ...(output ? ['output'] : [])],
          `final state '${entry.name}' does not return output field '${field}', which the machine declares`,
        );
    }
  }
}
