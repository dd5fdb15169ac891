import type { AnyStateMachine } from 'xstate';
import type { FlowSpec } from '@flowing/spec';
import type { AnyTool } from './tool.ts';

/** Everything the runtime needs about one generated machine. Generated `<id>.machine.ts` modules export one. */
export interface MachineDefinition<TMachine extends AnyStateMachine = AnyStateMachine, TEvent extends { type: string } = { type: string }> {
  id: string;
  /** The spec the machine was generated from (layout removed). */
  spec: FlowSpec;
  /** sha256 of the spec's canonical JSON; a stored session only resumes on the same hash. */
  specHash: string;
  machine: TMachine;
  /** The tools this machine (and its agents) may call, by name. */
  tools: Readonly<Record<string, AnyTool>>;
  /** Phantom field carrying the event type, so `session.send` is typed. */
  readonly __event?: TEvent;
}

export type AnyMachineDefinition = MachineDefinition<AnyStateMachine, { type: string }>;
export type EventOf<T> = T extends MachineDefinition<AnyStateMachine, infer E> ? E : never;

/** Bundles a generated machine with its spec and tools. Called by generated code. */
export function defineMachine<TMachine extends AnyStateMachine, TEvent extends { type: string }>(
  definition: Omit<MachineDefinition<TMachine, TEvent>, '__event'>,
): MachineDefinition<TMachine, TEvent> {
  return Object.freeze({ ...definition });
}
