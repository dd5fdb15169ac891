import type { AnyActorRef, AnyStateMachine, PromiseActorLogic } from 'xstate';
import type { ToolCallInput } from '../actors.ts';
import type { AnyMachineDefinition } from '../definition.ts';
import { FlowingError } from '../errors.ts';
import type { LlmRequest } from '../llm/types.ts';
import type { MachineInfo } from '../session/machine-info.ts';
import { isLlmInvoke, isToolInvoke } from '../session/machine-info.ts';
import { instrumentMachine } from '../session/instrument.ts';
import { runOfSystem } from '../session/run.ts';
import { callLlm } from './llm-call.ts';
import { CallScope } from './signals.ts';
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
      actors[name] = fromCall<ToolCallInput>((input, scope, self, system) => {
        const run = runOfSystem(system);
        if (!run) return Promise.reject(new FlowingError('TOOL_FAILED', `actor '${name}' runs outside a Flowing session`));
        const key = run.callKey(self.id, input);
        const invoke = info().invokes.get(self.id);
        return run.track(callTool({ run, key, tool, input, scope, invoke: invoke && isToolInvoke(invoke) ? invoke : undefined, onUnknownOutcome: 'attention' }));
      });
    } else if (name.startsWith('llm.')) {
      actors[name] = fromCall<LlmRequest>((input, scope, self, system) => {
        const run = runOfSystem(system);
        if (!run) return Promise.reject(new FlowingError('LLM_FAILED', `actor '${name}' runs outside a Flowing session`));
        const key = run.callKey(self.id, input);
        const invoke = info().invokes.get(self.id);
        return run.track(callLlm({ run, key, request: input, scope, invoke: invoke && isLlmInvoke(invoke) ? invoke : undefined }));
      });
    }
  }
  return instrumentMachine(machine, actors);
}

const scopes = new WeakMap<AnyActorRef, CallScope>();

/**
 * XState's `fromPromise` with the abort side owned by the runtime: the same snapshots and events (so stored
 * snapshots restore the same way), but stopping the actor stops a CallScope instead of aborting an AbortController
 * the call would have to link its own signals to.
 */
function fromCall<TInput>(create: (input: TInput, scope: CallScope, self: AnyActorRef, system: object) => Promise<unknown>): PromiseActorLogic<unknown, TInput> {
  return {
    config: create,
    transition(state, event, actorScope) {
      if (state.status !== 'active') return state;
      switch (event.type) {
        case 'xstate.promise.resolve':
          return { ...state, status: 'done', output: (event as unknown as { data: unknown }).data, input: undefined };
        case 'xstate.promise.reject':
          return { ...state, status: 'error', error: (event as unknown as { data: unknown }).data, input: undefined };
        case 'xstate.stop':
          scopes.get(actorScope.self)?.stop();
          scopes.delete(actorScope.self);
          return { ...state, status: 'stopped', input: undefined };
        default:
          return state;
      }
    },
    start(state, { self, system }) {
      if (state.status !== 'active') return;
      const scope = new CallScope();
      scopes.set(self, scope);
      Promise.resolve(create(state.input as TInput, scope, self, system)).then(
        (data) => {
          if (self.getSnapshot().status !== 'active') return;
          scopes.delete(self);
          self.send({ type: 'xstate.promise.resolve', data });
        },
        (data) => {
          if (self.getSnapshot().status !== 'active') return;
          scopes.delete(self);
          self.send({ type: 'xstate.promise.reject', data });
        },
      );
    },
    getInitialSnapshot: (_, input) => ({ status: 'active', output: undefined, error: undefined, input }),
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (snapshot) => snapshot as never,
  } as PromiseActorLogic<unknown, TInput>;
}
