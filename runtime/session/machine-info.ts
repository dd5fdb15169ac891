import type { AnyStateMachine, AnyStateNode } from 'xstate';
import type { z } from 'zod';
import {
  contextSchema, eventPayloadSchemas, parseExpression,
  type ExprNode, type InvokeSpec, type LlmInvokeSpec, type ToolInvokeSpec,
} from '@flowing/spec';
import type { AnyMachineDefinition } from '../definition.ts';
import { FlowingError } from '../errors.ts';

/** A state from which APPROVE leads into a state invoking a high-risk tool. */
export interface ApprovalSite {
  state: string;
  target: string;
  tool: string;
  input: Record<string, ExprNode>;
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

/** Derives a MachineInfo; throws FlowingError('TOOL_UNKNOWN') when an approval leads to a tool the definition lacks. */
export function analyzeMachine(definition: AnyMachineDefinition, provide: (machine: AnyStateMachine) => AnyStateMachine): MachineInfo {
  const invokes = new Map<string, InvokeSpec>(Object.entries(definition.invokes));
  const timedStates = new Set<string>();
  const approvalSites = new Map<string, ApprovalSite>();
  // Timers and APPROVE transitions are read from the machine itself: it is what runs, whatever spelling its targets use.
  for (const node of stateNodes(definition.machine.root)) {
    if (node.after.length > 0) timedStates.add(node.key);
    for (const transition of node.on.APPROVE ?? []) {
      for (const target of transition.target ?? []) {
        const site = approvalSite(definition, node.key, target.key, invokes.get(target.key));
        if (site) approvalSites.set(node.key, site);
      }
    }
  }
  return {
    definition,
    eventSchemas: eventPayloadSchemas({ events: definition.eventFields }),
    contextSchema: contextSchema({ context: definition.contextFields }),
    invokes,
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
function approvalSite(definition: AnyMachineDefinition, state: string, target: string, invoke: InvokeSpec | undefined): ApprovalSite | undefined {
  if (!invoke || !isToolInvoke(invoke)) return undefined;
  const tool = definition.tools[invoke.tool];
  if (!tool) throw new FlowingError('TOOL_UNKNOWN', `machine '${definition.id}' invokes tool '${invoke.tool}' in state '${target}', but the definition has no such tool`);
  if (tool.risk !== 'high') return undefined;
  const input: Record<string, ExprNode> = {};
  for (const [field, source] of Object.entries(invoke.input ?? {})) {
    const parsed = parseExpression(source, ['context', 'event']);
    if (!parsed.ok) throw new FlowingError('MACHINE_INVALID', `input '${field}' of state '${target}': ${parsed.error.message}`);
    input[field] = parsed.ast;
  }
  return { state, target, tool: invoke.tool, input };
}

export function isToolInvoke(invoke: InvokeSpec): invoke is ToolInvokeSpec {
  return 'tool' in invoke;
}

export function isLlmInvoke(invoke: InvokeSpec): invoke is LlmInvokeSpec {
  return 'llm' in invoke;
}
