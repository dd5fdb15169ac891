import type { AnyStateMachine } from 'xstate';
import type { z } from 'zod';
import {
  contextSchema, eventPayloadSchemas, listStates, normalizeTransition, parseExpression,
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

/** Derives a MachineInfo; throws FlowingError('TOOL_UNKNOWN') when the spec names a tool the definition lacks. */
export function analyzeMachine(definition: AnyMachineDefinition, provide: (machine: AnyStateMachine) => AnyStateMachine): MachineInfo {
  const spec = definition.spec;
  const states = listStates(spec);
  const invokes = new Map<string, InvokeSpec>();
  const timedStates = new Set<string>();
  for (const entry of states) {
    if (entry.spec.invoke) invokes.set(entry.name, entry.spec.invoke);
    if (entry.spec.after && Object.keys(entry.spec.after).length > 0) timedStates.add(entry.name);
  }
  const approvalSites = new Map<string, ApprovalSite>();
  for (const entry of states) {
    const approve = entry.spec.on?.APPROVE;
    if (approve === undefined) continue;
    for (const { transition } of normalizeTransition(approve, [])) {
      const invoke = transition.target ? invokes.get(transition.target) : undefined;
      if (!invoke || !isToolInvoke(invoke)) continue;
      const tool = definition.tools[invoke.tool];
      if (!tool) throw new FlowingError('TOOL_UNKNOWN', `machine '${definition.id}' invokes tool '${invoke.tool}' in state '${transition.target}', but the definition has no such tool`);
      if (tool.risk !== 'high') continue;
      const input: Record<string, ExprNode> = {};
      for (const [field, source] of Object.entries(invoke.input ?? {})) {
        const parsed = parseExpression(source, ['context', 'event']);
        if (!parsed.ok) throw new FlowingError('MACHINE_INVALID', `input '${field}' of state '${transition.target}': ${parsed.error.message}`);
        input[field] = parsed.ast;
      }
      approvalSites.set(entry.name, { state: entry.name, target: transition.target!, tool: invoke.tool, input });
    }
  }
  return {
    definition,
    eventSchemas: eventPayloadSchemas(spec),
    contextSchema: contextSchema(spec),
    invokes,
    approvalSites,
    timedStates,
    machine: provide(definition.machine),
    stateValues: new Map(),
  };
}

export function isToolInvoke(invoke: InvokeSpec): invoke is ToolInvokeSpec {
  return 'tool' in invoke;
}

export function isLlmInvoke(invoke: InvokeSpec): invoke is LlmInvokeSpec {
  return 'llm' in invoke;
}
