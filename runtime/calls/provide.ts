import type { AnyStateMachine } from 'xstate';
import type { z } from 'zod';
import { fieldMapToZod } from '@flowing/spec';
import type { AnyMachineDefinition } from '../definition.ts';
import { FlowingError } from '../errors.ts';
import type { LlmRequest } from '../llm/types.ts';
import { instrumentMachine, type InstrumentedMachine } from '../session/instrument.ts';
import { isLlmInvoke, isToolInvoke, type MachineInfo } from '../session/machine-info.ts';
import { fromCall } from './call-actor.ts';
import type { CallDirectory } from './directory.ts';
import type { ToolCallInput } from './context.ts';
import { callLlm } from './llm-call.ts';
import { callMachine } from './machine-call.ts';
import { callTool } from './tool-call.ts';

/**
 * Replaces a generated machine's `tool.<name>`, `llm.<kind>.<state>` and `machine.<id>` actors with the runtime's journaled,
 * logged, limited versions (see `fromCall`). An invoked actor finds the session it runs in through the runtime's
 * directory, by its actor system.
 */
export function provideRuntimeActors(
  definition: AnyMachineDefinition,
  machine: AnyStateMachine,
  info: () => MachineInfo,
  directory: CallDirectory,
): InstrumentedMachine {
  const actors: Record<string, unknown> = {};
  const outputSchemas = new Map<string, z.ZodType>();
  for (const name of Object.keys(machine.implementations.actors)) {
    if (name.startsWith('tool.')) {
      const toolName = name.slice('tool.'.length);
      const tool = definition.tools[toolName];
      if (!tool)
        throw new FlowingError(
          'TOOL_UNKNOWN',
          `machine '${definition.id}' has actor '${name}' but no tool '${toolName}' in its definition`,
        );
      actors[name] = fromCall<ToolCallInput>(
        directory,
        (site, input, self) => {
          const invoke = info().invokes.get(self.id);
          const spec = invoke && isToolInvoke(invoke) ? invoke : undefined;
          return site.call(self.id, input, { ...(spec ? { invoke: spec } : {}) }, (call) =>
            callTool(call, { tool, input, ...(spec ? { invoke: spec } : {}), onUnknownOutcome: 'attention' }),
          );
        },
        () => new FlowingError('TOOL_FAILED', `actor '${name}' runs outside a Flowing session`),
      );
    } else if (name.startsWith('llm.')) {
      actors[name] = fromCall<LlmRequest>(
        directory,
        (site, input, self) => {
          const invoke = info().invokes.get(self.id);
          const spec = invoke && isLlmInvoke(invoke) ? invoke : undefined;
          const outputSchema = spec ? outputSchemaOf(outputSchemas, self.id, spec) : undefined;
          return site.call(self.id, input, { ...(spec ? { invoke: spec } : {}), ...(outputSchema ? { outputSchema } : {}) }, (call) =>
            callLlm(call, input, `${definition.id}.${self.id}`),
          );
        },
        () => new FlowingError('LLM_FAILED', `actor '${name}' runs outside a Flowing session`),
      );
    } else if (name.startsWith('machine.')) {
      const machineId = name.slice('machine.'.length);
      actors[name] = fromCall<unknown>(
        directory,
        (site, input, self) => {
          const invoke = info().invokes.get(self.id);
          return site.call(self.id, input, invoke ? { invoke } : {}, (call) => callMachine(call, machineId, input));
        },
        () => new FlowingError('MACHINE_CALL_OUTSIDE_RUNTIME', `actor '${name}' runs outside a Flowing session`),
      );
    }
  }
  return instrumentMachine(machine, actors);
}

/**
 * An extract call's (or a structured agent's) output schema from the spec's fields (generated requests carry a copy of them; the spec is the
 * law). Building a zod schema is far dearer than using one, so it is built once per invoke of the machine.
 */
function outputSchemaOf(cache: Map<string, z.ZodType>, invokeId: string, invoke: object): z.ZodType | undefined {
  const { fields: extracted, output } = invoke as {
    fields?: Parameters<typeof fieldMapToZod>[0];
    output?: Parameters<typeof fieldMapToZod>[0];
  };
  const fields = extracted ?? output;
  if (!fields) return undefined;
  let schema = cache.get(invokeId);
  if (!schema) cache.set(invokeId, (schema = fieldMapToZod(fields)));
  return schema;
}
