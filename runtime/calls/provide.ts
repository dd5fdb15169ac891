import { fromPromise, type AnyStateMachine } from 'xstate';
import type { ToolCallInput } from '../actors.ts';
import type { AnyMachineDefinition } from '../definition.ts';
import { FlowingError } from '../errors.ts';
import type { LlmRequest } from '../llm/types.ts';
import type { MachineInfo } from '../session/machine-info.ts';
import { isLlmInvoke, isToolInvoke } from '../session/machine-info.ts';
import { runOfSystem } from '../session/run.ts';
import { callLlm } from './llm-call.ts';
import { callTool } from './tool-call.ts';

/**
 * Replaces a generated machine's `tool.<name>` and `llm.<kind>.<state>` actors with the runtime's journaled,
 * logged, limited versions. The session is found through the actor system the invoked actor runs in.
 */
export function provideRuntimeActors(definition: AnyMachineDefinition, machine: AnyStateMachine, info: () => MachineInfo): AnyStateMachine {
  const actors: Record<string, unknown> = {};
  for (const name of Object.keys(machine.implementations.actors)) {
    if (name.startsWith('tool.')) {
      const toolName = name.slice('tool.'.length);
      const tool = definition.tools[toolName];
      if (!tool) throw new FlowingError('TOOL_UNKNOWN', `machine '${definition.id}' has actor '${name}' but no tool '${toolName}' in its definition`);
      actors[name] = fromPromise<unknown, ToolCallInput>(({ input, signal, self, system }) => {
        const run = runOfSystem(system);
        if (!run) return Promise.reject(new FlowingError('TOOL_FAILED', `actor '${name}' runs outside a Flowing session`));
        const key = run.callKey(self.id);
        const invoke = info().invokes.get(self.id);
        return run.track(callTool({ run, key, tool, input, signal, invoke: invoke && isToolInvoke(invoke) ? invoke : undefined, onUnknownOutcome: 'attention' }));
      });
    } else if (name.startsWith('llm.')) {
      actors[name] = fromPromise<unknown, LlmRequest>(({ input, signal, self, system }) => {
        const run = runOfSystem(system);
        if (!run) return Promise.reject(new FlowingError('LLM_FAILED', `actor '${name}' runs outside a Flowing session`));
        const key = run.callKey(self.id);
        const invoke = info().invokes.get(self.id);
        return run.track(callLlm({ run, key, request: input, signal, invoke: invoke && isLlmInvoke(invoke) ? invoke : undefined }));
      });
    }
  }
  return machine.provide({ actors } as never);
}
