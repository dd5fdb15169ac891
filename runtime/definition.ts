import type { AnyStateMachine } from 'xstate';
import {
  evaluateExpression,
  listStates,
  parseExpression,
  type ExprNode,
  type FieldMap,
  type FlowSpec,
  type LlmInvokeSpec,
  type SpecLimits,
  type MachineInvokeSpec,
  type ToolInvokeSpec,
} from '@flowing/spec';
import { FlowingError } from './errors.ts';
import type { AnyTool } from './tool.ts';

/**
 * A tool invoke's arguments from the machine's context: the values the invoke passes to the tool. The runtime calls it
 * to show a person what a high-risk call will receive before it runs. Generated modules emit a typed function (the
 * one their invoke uses); for a machine written by hand, `contractOf` builds it from the spec's input mapping.
 */
export type ToolArgs = (context: never) => unknown;

/** What the runtime reads of a tool invoke: the tool, its arguments (shown on approvals), retries, timeout. */
export type ToolInvokeInfo = Pick<ToolInvokeSpec, 'tool' | 'retries' | 'timeoutMs'> & { args: ToolArgs };
/** What the runtime reads of a model call invoke: its kind and timeout (the request itself comes from the machine). */
export type LlmInvokeInfo = Pick<LlmInvokeSpec, 'llm' | 'timeoutMs'>;
/** What the runtime reads of a machine invoke: the machine its child session runs (the input comes from the machine). */
export type MachineInvokeInfo = Pick<MachineInvokeSpec, 'machine' | 'timeoutMs'>;
export type InvokeInfo = ToolInvokeInfo | LlmInvokeInfo | MachineInvokeInfo;

/** The part of a spec the runtime checks at run time; generated modules emit it instead of a copy of the spec. */
export interface MachineContract {
  /** The context's fields: every context a step produces is checked against them. */
  contextFields: FieldMap;
  /** Declared events and their payload fields; any other event is refused. */
  eventFields: Record<string, FieldMap>;
  /** The invoke of each state that has one, by state name (the invoked actor's id). */
  invokes: Readonly<Record<string, InvokeInfo>>;
  /** The spec's own bounds (`limits` at its top level); the runtime's limits fill in what it leaves out. */
  limits?: SpecLimits;
  /** The channels the machine receives and the context field holding a receiving session's key (spec `channels`). */
  channels?: { listen: readonly string[]; key: string };
}

/** Everything the runtime needs about one generated machine. Generated `<id>.machine.ts` modules export one. */
export interface MachineDefinition<TMachine extends AnyStateMachine = AnyStateMachine, TEvent extends { type: string } = { type: string }>
  extends MachineContract {
  id: string;
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

/**
 * What `defineMachine` takes: the contract as generated code emits it, or (for a machine written by hand) the spec it
 * follows, from which the contract is derived.
 */
export type MachineDefinitionConfig<TMachine extends AnyStateMachine, TEvent extends { type: string }> = Omit<
  MachineDefinition<TMachine, TEvent>,
  '__event' | keyof MachineContract
> &
  (MachineContract | { spec: FlowSpec });

/**
 * Bundles a machine with its tools and contract. Called by generated code.
 * @example defineMachine({ id, specHash, machine, tools, contextFields, eventFields, invokes })
 */
export function defineMachine<TMachine extends AnyStateMachine, TEvent extends { type: string }>(
  config: MachineDefinitionConfig<TMachine, TEvent>,
): MachineDefinition<TMachine, TEvent> {
  if (!('spec' in config)) return Object.freeze({ ...config });
  const { spec, ...rest } = config;
  return Object.freeze({ ...rest, ...contractOf(spec) });
}

/**
 * The run-time contract of a spec, for a machine written by hand: its context and event fields and what each invoke
 * needs. Each tool's input mapping is parsed here, once, into an arguments function; throws
 * FlowingError('MACHINE_INVALID') when a mapping does not parse.
 */
export function contractOf(spec: Pick<FlowSpec, 'context' | 'events' | 'states' | 'limits' | 'channels'>): MachineContract {
  const invokes: Record<string, InvokeInfo> = {};
  for (const { name, spec: state } of listStates(spec)) {
    const invoke = state.invoke;
    if (!invoke) continue;
    invokes[name] =
      'tool' in invoke
        ? { tool: invoke.tool, args: argsOf(name, invoke.input ?? {}), retries: invoke.retries, timeoutMs: invoke.timeoutMs }
        : 'machine' in invoke
          ? { machine: invoke.machine, timeoutMs: invoke.timeoutMs }
          : { llm: invoke.llm, timeoutMs: invoke.timeoutMs };
  }
  return {
    contextFields: spec.context,
    eventFields: spec.events,
    invokes,
    ...(spec.limits ? { limits: spec.limits } : {}),
    ...(spec.channels ? { channels: spec.channels } : {}),
  };
}

/**
 * A spec's input mapping as an arguments function: each field's expression parsed once, evaluated on each call.
 * A machine written by hand may read `event` in its mappings (its own input functions get the event); the arguments
 * an approval shows are computed on entering the approval state, where there is no such event, so it reads `{}`.
 */
function argsOf(state: string, input: Record<string, string>): ToolArgs {
  const fields: Array<[string, ExprNode]> = Object.entries(input).map(([field, source]) => {
    const parsed = parseExpression(source, ['context', 'event']);
    if (!parsed.ok) throw new FlowingError('MACHINE_INVALID', `input '${field}' of state '${state}': ${parsed.error.message}`);
    return [field, parsed.ast];
  });
  return (context: unknown) => Object.fromEntries(fields.map(([field, ast]) => [field, evaluateExpression(ast, { context, event: {} })]));
}
