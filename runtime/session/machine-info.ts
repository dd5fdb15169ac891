import type { AnyStateMachine, AnyStateNode } from 'xstate';
import type { z } from 'zod';
import { contextSchema, eventPayloadSchemas, type InvokeSpec, type LlmInvokeSpec, type ToolInvokeSpec } from '@flowing/spec';
import type { AnyMachineDefinition, InvokeInfo, ToolInvokeInfo } from '../definition.ts';
import { FlowingError } from '../errors.ts';

/** A state from which APPROVE leads into a state invoking a high-risk tool. */
export interface ApprovalSite {
  state: string;
  target: string;
  tool: string;
  /** The arguments the target's invoke passes, from the context: the compiled function of the machine's contract. */
  args: (context: unknown) => unknown;
}

/** What the runtime derives once per machine: schemas, invokes by state name, approval sites. */
export interface MachineInfo {
  definition: AnyMachineDefinition;
  eventSchemas: Map<string, z.ZodObject>;
  contextSchema: z.ZodObject;
  invokes: Map<string, InvokeSpec>;
  approvalSites: Map<string, ApprovalSite>;
  /** Names of states that have `after` transitions (a session waiting there is kept live for its timer). */
  timedStates: Set<string>;
  /** The machine with the runtime's tool and model actors provided. */
  machine: AnyStateMachine;
  /** Frozen state values shared by all sessions of the machine, by their JSON. */
  stateValues: Map<string, unknown>;
}

/**
 * Derives a MachineInfo. Throws FlowingError('TOOL_UNKNOWN') when an approval leads to a tool the definition lacks,
 * and FlowingError('MACHINE_INVALID') when one state's APPROVE can lead to two high-risk calls (a person would approve
 * one and another would run; the validator refuses such a spec with SPEC_AMBIGUOUS_APPROVAL).
 */
export function analyzeMachine(definition: AnyMachineDefinition, provide: (machine: AnyStateMachine) => AnyStateMachine): MachineInfo {
  const contract = new Map<string, InvokeInfo>(Object.entries(definition.invokes));
  const timedStates = new Set<string>();
  const approvalSites = new Map<string, ApprovalSite>();
  // Timers and APPROVE transitions are read from the machine itself: it is what runs, whatever spelling its targets use.
  for (const node of stateNodes(definition.machine.root)) {
    if (node.after.length > 0) timedStates.add(node.key);
    for (const transition of node.on.APPROVE ?? []) {
      for (const target of transition.target ?? []) {
        const site = approvalSite(definition, node.key, target.key, contract.get(target.key));
        if (!site) continue;
        const other = approvalSites.get(node.key);
        if (other && other.target !== site.target) {
          throw new FlowingError(
            'MACHINE_INVALID',
            `machine '${definition.id}': APPROVE in state '${node.key}' can lead to high-risk tool '${other.tool}' (state '${other.target}') and to '${site.tool}' (state '${site.target}'); a person approves one call, so give each its own approval state`,
          );
        }
        approvalSites.set(node.key, site);
      }
    }
  }
  return {
    definition,
    eventSchemas: eventPayloadSchemas({ events: definition.eventFields }),
    contextSchema: contextSchema({ context: definition.contextFields }),
    // Callers read retries and timeouts through the spec's invoke types; the contract holds exactly those fields.
    invokes: contract as Map<string, InvokeSpec>,
    approvalSites,
    timedStates,
    machine: provide(definition.machine),
    stateValues: new Map(),
  };
}

function stateNodes(root: AnyStateNode): AnyStateNode[] {
  const out: AnyStateNode[] = [];
  const visit = (node: AnyStateNode) => {
    out.push(node);
    for (const child of Object.values(node.states)) visit(child);
  };
  Object.values(root.states).forEach(visit);
  return out;
}

/** The approval a state asks for when its APPROVE leads into a state that invokes a high-risk tool. */
function approvalSite(
  definition: AnyMachineDefinition,
  state: string,
  target: string,
  invoke: InvokeInfo | undefined,
): ApprovalSite | undefined {
  if (!invoke || !('tool' in invoke)) return undefined;
  const tool = definition.tools[invoke.tool];
  if (!tool)
    throw new FlowingError(
      'TOOL_UNKNOWN',
      `machine '${definition.id}' invokes tool '${invoke.tool}' in state '${target}', but the definition has no such tool`,
    );
  if (tool.risk !== 'high') return undefined;
  const { args } = invoke as ToolInvokeInfo;
  if (typeof args !== 'function') {
    throw new FlowingError(
      'MACHINE_INVALID',
      `machine '${definition.id}': the invoke of state '${target}' has no args function; regenerate the machine with \`flowing codegen\``,
    );
  }
  return { state, target, tool: invoke.tool, args: args as (context: unknown) => unknown };
}

export function isToolInvoke(invoke: InvokeSpec): invoke is ToolInvokeSpec {
  return 'tool' in invoke;
}

export function isLlmInvoke(invoke: InvokeSpec): invoke is LlmInvokeSpec {
  return 'llm' in invoke;
}
