import {
  fieldDefault,
  isRequiredInput,
  listStates,
  pointer,
  type FieldMap,
  type FieldType,
  type FlowSpec,
  type InvokeSpec,
  type StateEntry,
} from '@flowing/spec';
import { importSpecifier, machineNames, memberAccess, propertyKey, type MachineNames } from '../names.ts';
import { DocWriter, flat, mapped, object, seq, typeLiteral, type Doc, type Member } from './doc.ts';
import { ImplementationTable } from './implementations.ts';
import { literalDoc, stringDoc } from './literal.ts';
import { statesDoc } from './states.ts';
import type { TransitionScope } from './transitions.ts';
import { fieldMapDoc, fieldMembers } from './types.ts';
import type { SourceRegion } from './writer.ts';

export interface EmitMachineOptions {
  specFile: string;
  specHash: string;
  generatorVersion: string;
  /** Import specifier of each invoked machine's generated module, by machine id, and whether it declares an output. */
  children?: Readonly<Record<string, ChildModuleRef>>;
}

/** Where an invoked machine's generated module is, seen from this machine's folder. */
export interface ChildModuleRef {
  specifier: string;
  /** False when the child declares no `output` (its module then exports no output type). */
  hasOutput: boolean;
}

export interface EmittedModule {
  text: string;
  regions: SourceRegion[];
}

interface Actor {
  name: string;
  create: Doc;
}

/** One actor per tool, and one per model call kind and output type; states differ only in their input mapping. */
function planActors(
  states: StateEntry[],
  names: MachineNames,
  children: EmitMachineOptions['children'],
): { actors: Actor[]; byState: Map<string, string> } {
  const byState = new Map<string, string>();
  const tools = new Map<string, Actor>();
  const machines = new Map<string, Actor>();
  const models = new Map<string, Array<{ typeArgument: string; states: string[]; create: Doc }>>();
  for (const entry of states) {
    const invoke = entry.spec.invoke;
    if (!invoke) continue;
    if ('tool' in invoke) {
      const name = `tool.${invoke.tool}`;
      tools.set(name, { name, create: `fromTool(${names.tools}.${invoke.tool})` });
      byState.set(entry.name, name);
      continue;
    }
    if ('machine' in invoke) {
      const name = `machine.${invoke.machine}`;
      const child = machineNames(invoke.machine);
      const output = children?.[invoke.machine]?.hasOutput === false ? 'Record<string, never>' : child.output;
      machines.set(name, { name, create: `fromMachine<${child.input}, ${output}>(${JSON.stringify(invoke.machine)})` });
      byState.set(entry.name, name);
      continue;
    }
    const typeArgument = llmTypeArgument(invoke);
    const kinds = models.get(invoke.llm) ?? [];
    models.set(invoke.llm, kinds);
    let group = kinds.find((k) => k.typeArgument === typeArgument);
    if (!group) kinds.push((group = { typeArgument, states: [], create: seq(`fromLlm${typeArgument}(`, JSON.stringify(invoke.llm), ')') }));
    group.states.push(entry.name);
  }
  const byName = (a: Actor, b: Actor) => a.name.localeCompare(b.name);
  const actors = [...tools.values()].sort(byName);
  for (const [kind, groups] of [...models.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    for (const group of groups) {
      // Several output types of one kind (two classify calls with other labels) need one actor each.
      const name = groups.length === 1 ? `llm.${kind}` : `llm.${kind}.${group.states[0]}`;
      actors.push({ name, create: group.create });
      group.states.forEach((state) => byState.set(state, name));
    }
  }
  actors.push(...[...machines.values()].sort(byName));
  return { actors, byState };
}

function llmTypeArgument(invoke: Extract<InvokeSpec, { llm: string }>): string {
  if (invoke.llm === 'classify') return `<${(invoke.labels ?? []).map((l) => JSON.stringify(l)).join(' | ') || 'string'}>`;
  // A call whose memory summarises answers with the summary it made among its new messages (appended by onDone).
  const summary = invoke.history !== undefined && invoke.memory?.summarize !== undefined ? ' & { messages?: ConversationMessage[] }' : '';
  if (invoke.llm === 'extract') return `<${flat(fieldMapDoc(invoke.fields ?? {}))}${summary}>`;
  if (invoke.llm === 'agent') {
    // A handoff's `to` is typed as the union of the targets, so a guard naming another is a type error. With a
    // history, the structured answer also carries the call's new messages (appended by onDone).
    const targets = (invoke.handoffs ?? []).map((t) => JSON.stringify(t)).join(' | ');
    const messages = invoke.history === undefined ? '' : ' & { messages?: ConversationMessage[] }';
    if (invoke.output) return `<${flat(fieldMapDoc(invoke.output))}${messages}${targets ? `, ${targets}` : ''}>`;
    if (targets) return `<${targets}>`;
  }
  return '';
}

/** Emits `<id>.machine.ts`: context and event types, the XState v5 machine and its definition for the runtime. */
export function emitMachineModule(spec: FlowSpec, options: EmitMachineOptions): EmittedModule {
  const names = machineNames(spec.id);
  const states = listStates(spec);
  const { actors, byState } = planActors(states, names, options.children);
  const declaredGuards = Object.keys(spec.guards ?? {}).map((name) => ({
    key: propertyKey(name),
    value: `${names.guards}.${name}`,
    pointer: pointer('guards', name),
  }));
  const declaredActions = Object.keys(spec.actions ?? {}).map((name) => ({
    key: propertyKey(name),
    value: `${names.actions}.${name}`,
    pointer: pointer('actions', name),
  }));
  const table = new ImplementationTable(declaredGuards, declaredActions);
  const scope: TransitionScope = {
    machineId: spec.id,
    byName: new Map(states.map((s) => [s.name, s])),
    models: spec.models,
    table,
    order: new Map(states.map((s, i) => [s, i])),
    toolArgs: [],
    contextType: names.context,
    outputType: names.output,
    registry: names.tools,
  };
  const machineStates = statesDoc(
    scope,
    { byState },
    states.filter((s) => !s.parent),
    states,
  );
  table.resolve();

  const out = new DocWriter();
  out.line(`// Generated from ${options.specFile} by flowing codegen — do not edit.`);
  out.line(`// Change the spec and run \`flowing codegen\`. spec sha256:${options.specHash} generator:flowing@${options.generatorVersion}`);
  writeImports(out, spec, names, table, actors.length > 0, options.children);
  out.line();
  writeTypes(out, spec, names, table.uses.has('EventOf'));
  if (actors.length > 0) {
    out.line();
    out.line(
      seq(
        'const actors = ',
        object(
          actors.map((a) => ({ key: JSON.stringify(a.name), value: a.create })),
          true,
        ),
        ';',
      ),
    );
    out.line('type Input<TActor extends keyof typeof actors> = InputFrom<(typeof actors)[TActor]>;');
    if (table.uses.has('Output')) out.line('type Output<TActor extends keyof typeof actors> = OutputFrom<(typeof actors)[TActor]>;');
  }
  if (scope.toolArgs.length > 0) {
    out.line();
    out.line('/** The arguments of each tool call, by state: what the invoke passes, and what an approval shows before it runs. */');
    out.line(seq('const toolArgs = ', object(scope.toolArgs, true), ';'));
  }
  out.line();
  const setupMembers: Member[] = [
    {
      key: 'types',
      value: `{} as { context: ${names.context}; events: ${names.event}; input: ${names.input}${allInputOptional(spec) ? ' | undefined' : ''}${spec.output ? `; output: ${names.output}` : ''} }`,
    },
  ];
  if (actors.length > 0) setupMembers.push({ value: 'actors' });
  if (table.guards.length > 0) setupMembers.push({ key: 'guards', value: object(table.guards, true) });
  if (table.actions.length > 0) setupMembers.push({ key: 'actions', value: object(table.actions, true) });
  const config: Member[] = [{ key: 'id', value: JSON.stringify(spec.id) }];
  if (spec.description !== undefined) config.push({ key: 'description', value: stringDoc(spec.description) });
  config.push({ key: 'context', value: contextFactory(spec) });
  if (spec.initial !== undefined) config.push({ key: 'initial', value: JSON.stringify(spec.initial) });
  config.push({ key: 'states', value: machineStates });
  // The machine returns what its final state returned (XState hands a top-level final state's output to the root).
  if (spec.output) config.push({ key: 'output', value: `({ event }) => event.output as ${names.output}` });
  out.line(seq(`export const ${names.machine} = setup(`, object(setupMembers, true), ').createMachine(', object(config, true), ');'));
  out.line();
  out.line(`/** The machine with its tools and run-time contract, for \`createRuntime({ machines: [${names.definition}] })\`. */`);
  out.line(
    seq(
      `export const ${names.definition} = defineMachine<typeof ${names.machine}, ${names.event}>(`,
      object(
        [
          { key: 'id', value: JSON.stringify(spec.id) },
          { key: 'specHash', value: JSON.stringify(options.specHash) },
          { key: 'machine', value: names.machine },
          { key: 'tools', value: names.tools },
          { key: 'contextFields', value: literalDoc(contractFields(spec.context)) },
          {
            key: 'eventFields',
            value: literalDoc(Object.fromEntries(Object.entries(spec.events).map(([e, f]) => [e, contractFields(f)]))),
          },
          { key: 'invokes', value: invokesDoc(states) },
          ...(spec.limits ? [{ key: 'limits', value: literalDoc(spec.limits) }] : []),
          ...(spec.channels ? [{ key: 'channels', value: literalDoc(spec.channels), pointer: pointer('channels') }] : []),
        ],
        true,
      ),
      ');',
    ),
  );
  return { text: out.toString(), regions: out.regions };
}

function writeImports(
  out: DocWriter,
  spec: FlowSpec,
  names: MachineNames,
  table: ImplementationTable,
  hasActors: boolean,
  children: EmitMachineOptions['children'],
): void {
  const invokes = listStates(spec).flatMap((s) => (s.spec.invoke ? [s.spec.invoke] : []));
  const xstate = [
    table.uses.has('assign') ? 'assign' : '',
    table.uses.has('emit') ? 'emit' : '',
    'setup',
    hasActors ? 'type InputFrom' : '',
    table.uses.has('Output') ? 'type OutputFrom' : '',
  ];
  out.line(`import { ${xstate.filter(Boolean).join(', ')} } from "xstate";`);
  const llm = invokes.some((i) => 'llm' in i);
  const runtime = [
    table.uses.has('appendMessage') ? 'appendMessage' : '',
    table.uses.has('asText') ? 'asText' : '',
    'defineMachine',
    llm ? 'fromLlm' : '',
    invokes.some((i) => 'tool' in i) ? 'fromTool' : '',
    invokes.some((i) => 'machine' in i) ? 'fromMachine' : '',
    table.uses.has('toFlowError') ? 'toFlowError' : '',
    table.uses.has('FlowError') ? 'type FlowError' : '',
    table.uses.has('ToolInput') ? 'type ToolInput' : '',
    hasConversation(spec) ? 'type ConversationMessage' : '',
  ];
  out.line(`import { ${runtime.filter(Boolean).join(', ')} } from "@flowing/runtime";`);
  out.line(`import { ${names.tools} } from "./${importSpecifier(names.registryFile)}";`);
  const invoked = [...new Set(invokes.flatMap((i) => ('machine' in i ? [i.machine] : [])))].sort();
  for (const id of invoked) {
    const child = machineNames(id);
    const types = children?.[id]?.hasOutput === false ? [child.input] : [child.input, child.output];
    const specifier = children?.[id]?.specifier ?? `../${id}/${importSpecifier(child.machineFile)}`;
    out.line(`import type { ${types.join(', ')} } from ${JSON.stringify(specifier)};`);
  }
  const impl = [
    spec.guards && Object.keys(spec.guards).length ? names.guards : '',
    spec.actions && Object.keys(spec.actions).length ? names.actions : '',
  ];
  if (impl.some(Boolean)) out.line(`import { ${impl.filter(Boolean).join(', ')} } from "./${importSpecifier(names.implFile)}";`);
}

function writeTypes(out: DocWriter, spec: FlowSpec, names: MachineNames, eventOf: boolean): void {
  const context = fieldMembers(spec.context, (field) => pointer('context', field));
  out.line(seq(`export interface ${names.context} `, typeLiteral(context, true)));
  out.line();
  const events = Object.entries(spec.events).map(([event, payload]) =>
    mapped(pointer('events', event), typeLiteral([{ key: 'type', value: JSON.stringify(event) }, ...fieldMembers(payload)])),
  );
  // With no events at all, the machine still needs an event type XState accepts; none can be sent.
  out.line(
    events.length === 0
      ? `export type ${names.event} = { type: never };`
      : seq(`export type ${names.event} =`, { kind: 'union', members: events, broken: true }, ';'),
  );
  out.line();
  const context_ = names.context;
  const required = Object.entries(spec.context)
    .filter(([, t]) => isRequiredInput(t))
    .map(([f]) => JSON.stringify(f));
  const input =
    Object.keys(spec.context).length === 0
      ? 'Record<string, never>'
      : required.length === 0
        ? `Partial<${context_}>`
        : `Partial<${context_}> & Pick<${context_}, ${required.join(' | ')}>`;
  out.line(`export type ${names.input} = ${input};`);
  if (spec.output) {
    out.line();
    out.line(
      seq(
        `export interface ${names.output} `,
        typeLiteral(
          fieldMembers(spec.output, (field) => pointer('output', field)),
          true,
        ),
      ),
    );
  }
  if (eventOf) {
    out.line();
    out.line(`type EventOf<TType extends ${names.event}["type"]> = Extract<${names.event}, { type: TType }>;`);
  }
}

/** Whether the machine's types name ConversationMessage: a conversation field in its context or output. */
function hasConversation(spec: FlowSpec): boolean {
  return [...Object.values(spec.context), ...Object.values(spec.output ?? {})].some((t) => t.type === 'conversation');
}

function allInputOptional(spec: FlowSpec): boolean {
  return Object.values(spec.context).every((t) => !isRequiredInput(t));
}

function contextFactory(spec: FlowSpec): Doc {
  const defaults = Object.entries(spec.context).filter(([, t]) => fieldDefault(t) !== undefined);
  const members: Member[] = defaults.map(([field, t]) => ({
    key: propertyKey(field),
    value: literalDoc(fieldDefault(t)),
    pointer: pointer('context', field, 'default'),
  }));
  members.push({ value: '...input' });
  return seq('({ input }) => (', object(members), ')');
}

/** Field types as the runtime checks them: without descriptions and defaults. */
function contractFields(fields: FieldMap): FieldMap {
  const strip = (t: FieldType): FieldType => {
    const { description: _description, default: _default, items, fields: nested, ...rest } = t;
    return { ...rest, ...(items ? { items: strip(items) } : {}), ...(nested ? { fields: contractFields(nested) } : {}) };
  };
  return Object.fromEntries(Object.entries(fields).map(([name, t]) => [name, strip(t)]));
}

/** What the runtime reads of each invoke; a tool's arguments are the compiled `toolArgs` function, not spec text. */
function invokesDoc(states: StateEntry[]): Doc {
  const members: Member[] = [];
  for (const { name, spec } of states) {
    const invoke = spec.invoke;
    if (!invoke) continue;
    if ('llm' in invoke) {
      members.push({ key: propertyKey(name), value: literalDoc({ llm: invoke.llm, timeoutMs: invoke.timeoutMs }) });
      continue;
    }
    if ('machine' in invoke) {
      members.push({ key: propertyKey(name), value: literalDoc({ machine: invoke.machine, timeoutMs: invoke.timeoutMs }) });
      continue;
    }
    const info: Member[] = [
      { key: 'tool', value: stringDoc(invoke.tool) },
      { key: 'args', value: memberAccess('toolArgs', name) },
    ];
    if (invoke.retries !== undefined) info.push({ key: 'retries', value: literalDoc(invoke.retries) });
    if (invoke.timeoutMs !== undefined) info.push({ key: 'timeoutMs', value: literalDoc(invoke.timeoutMs) });
    members.push({ key: propertyKey(name), value: object(info) });
  }
  return object(members);
}
