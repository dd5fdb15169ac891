import {
  listStates, normalizeTransition, pointer, type ActionBlock, type FlowSpec, type InvokeSpec, type LlmInvokeSpec, type StateEntry,
  type TransitionObject, type TransitionSpec,
} from '@flowing/spec';
import { machineNames, propertyKey, type MachineNames } from '../names.ts';
import { expressionSource, lambdaParams, templateSource, type ExpressionSite } from './expressions.ts';
import { printLiteral } from './literal.ts';
import { fieldTypeSource, objectTypeSource } from './types.ts';
import { MappedWriter, type SourceRegion } from './writer.ts';

export interface EmitMachineOptions {
  specFile: string;
  specHash: string;
  generatorVersion: string;
}

export interface EmittedModule {
  text: string;
  regions: SourceRegion[];
}

const DEFAULT_AGENT_ITERATIONS = 5;

const LLM_REQUEST_TYPES: Record<LlmInvokeSpec['llm'], string> = {
  classify: 'ClassifyRequest', extract: 'ExtractRequest', generate: 'GenerateRequest', agent: 'AgentRequest',
};

function llmRequestTypes(invokes: InvokeSpec[]): string[] {
  const kinds = new Set(invokes.flatMap((i) => ('llm' in i ? [i.llm] : [])));
  return [...kinds].sort().map((kind) => `type ${LLM_REQUEST_TYPES[kind]}`);
}

/** Emits `<id>.machine.ts`: context/event types, the XState v5 machine and its MachineDefinition. */
export function emitMachineModule(spec: FlowSpec, options: EmitMachineOptions): EmittedModule {
  const names = machineNames(spec.id);
  const out = new MappedWriter();
  const w = out.writer;
  const states = listStates(spec);
  const byName = new Map(states.map((s) => [s.name, s]));
  const hasGuards = Object.keys(spec.guards ?? {}).length > 0;
  const hasActions = Object.keys(spec.actions ?? {}).length > 0;
  const usesAssign = usesAssignAnywhere(states);

  w.writeLine(`// Generated from ${options.specFile} by flowing codegen — do not edit.`);
  w.writeLine(`// Change the spec and run \`flowing codegen\`. spec sha256:${options.specHash} generator:flowing@${options.generatorVersion}`);
  w.writeLine(`import { ${usesAssign ? 'assign, ' : ''}setup } from "xstate";`);
  const invokes = states.flatMap((s) => (s.spec.invoke ? [s.spec.invoke] : []));
  const runtimeImports = [
    invokes.some((i) => 'llm' in i) ? 'asText' : '', 'defineMachine', invokes.some((i) => 'llm' in i) ? 'fromLlm' : '',
    invokes.some((i) => 'tool' in i) ? 'fromTool' : '', readsError(states) ? 'type FlowError' : '',
    ...llmRequestTypes(invokes), invokes.some((i) => 'tool' in i) ? 'type ToolCallInput' : '', invokes.some((i) => 'tool' in i) ? 'type ToolInput' : '',
  ].filter(Boolean);
  w.writeLine(`import { ${runtimeImports.join(', ')} } from "@flowing/runtime";`);
  w.writeLine('import type { FlowSpec } from "@flowing/spec";');
  w.writeLine(`import { ${names.tools} } from "./${names.registryFile}";`);
  if (hasGuards || hasActions) {
    const imported = [hasGuards ? names.guards : '', hasActions ? names.actions : ''].filter(Boolean).join(', ');
    w.writeLine(`import { ${imported} } from "./${names.implFile}";`);
  }
  w.blankLine();

  writeTypes(out, spec, names);
  w.blankLine();

  w.writeLine(`export const ${names.machine} = setup({`);
  w.indent(() => {
    w.writeLine(`types: {} as { context: ${names.context}; events: ${names.event}; input: ${names.input}${allInputOptional(spec) ? ' | undefined' : ''} },`);
    writeActors(out, spec, states, names);
    if (hasGuards) writeNamedTable(out, 'guards', Object.keys(spec.guards ?? {}), names.guards, '/guards');
    if (hasActions) writeNamedTable(out, 'actions', Object.keys(spec.actions ?? {}), names.actions, '/actions');
  });
  w.writeLine('}).createMachine({');
  w.indent(() => {
    w.writeLine(`id: ${JSON.stringify(spec.id)},`);
    if (spec.description !== undefined) w.writeLine(`description: ${JSON.stringify(spec.description)},`);
    writeContextFactory(out, spec);
    if (spec.initial !== undefined) w.writeLine(`initial: ${JSON.stringify(spec.initial)},`);
    w.writeLine('states: {');
    w.indent(() => {
      for (const entry of states.filter((s) => !s.parent)) writeState(out, entry, states, byName, spec);
    });
    w.writeLine('},');
  });
  w.writeLine('});');
  w.blankLine();

  const embedded: Record<string, unknown> = { ...spec };
  delete embedded.layout;
  delete embedded.$schema;
  w.writeLine(`const spec: FlowSpec = ${printLiteral(embedded)};`);
  w.blankLine();
  w.writeLine(`/** The machine with its spec and tools, ready for \`createRuntime({ machines: [${names.definition}] })\`. */`);
  w.writeLine(`export const ${names.definition} = defineMachine<typeof ${names.machine}, ${names.event}>({`);
  w.indent(() => {
    w.writeLine(`id: ${JSON.stringify(spec.id)},`);
    w.writeLine(`specHash: ${JSON.stringify(options.specHash)},`);
    w.writeLine('spec,');
    w.writeLine(`machine: ${names.machine},`);
    w.writeLine(`tools: ${names.tools},`);
  });
  w.writeLine('});');
  return { text: out.toString(), regions: out.regions };
}

function allInputOptional(spec: FlowSpec): boolean {
  return Object.values(spec.context).every((t) => t.optional || t.default !== undefined);
}

function writeTypes(out: MappedWriter, spec: FlowSpec, names: MachineNames) {
  const w = out.writer;
  w.writeLine(`export interface ${names.context} {`);
  w.indent(() => {
    for (const [field, type] of Object.entries(spec.context)) {
      out.mapped(pointer('context', field), () => w.writeLine(`${propertyKey(field)}${type.optional ? '?' : ''}: ${fieldTypeSource(type)};`));
    }
  });
  w.writeLine('}');
  w.blankLine();
  const events = Object.entries(spec.events);
  w.writeLine(`export type ${names.event} =`);
  w.indent(() => {
    if (events.length === 0) w.writeLine('never;');
    events.forEach(([event, payload], i) => {
      const members = [`type: ${JSON.stringify(event)}`, ...Object.entries(payload).map(([f, t]) => `${propertyKey(f)}${t.optional ? '?' : ''}: ${fieldTypeSource(t)}`)];
      out.mapped(pointer('events', event), () => w.writeLine(`| { ${members.join('; ')} }${i === events.length - 1 ? ';' : ''}`));
    });
  });
  w.blankLine();
  const inputMembers = Object.entries(spec.context).map(([field, type]) =>
    `${propertyKey(field)}${type.optional || type.default !== undefined ? '?' : ''}: ${fieldTypeSource(type)}`);
  w.writeLine(`export type ${names.input} = ${inputMembers.length === 0 ? 'Record<string, never>' : `{ ${inputMembers.join('; ')} }`};`);
}

function writeActors(out: MappedWriter, spec: FlowSpec, states: StateEntry[], names: MachineNames) {
  const w = out.writer;
  const tools = new Set<string>();
  const llmSites: Array<{ entry: StateEntry; invoke: LlmInvokeSpec }> = [];
  for (const entry of states) {
    const invoke = entry.spec.invoke;
    if (!invoke) continue;
    if ('tool' in invoke) tools.add(invoke.tool);
    else llmSites.push({ entry, invoke });
  }
  w.writeLine('actors: {');
  w.indent(() => {
    for (const tool of [...tools].sort()) w.writeLine(`${JSON.stringify(`tool.${tool}`)}: fromTool(${names.tools}.${tool}),`);
    for (const { entry, invoke } of llmSites) {
      const typeArgument = invoke.llm === 'classify' ? `<${(invoke.labels ?? []).map((l) => JSON.stringify(l)).join(' | ') || 'string'}>`
        : invoke.llm === 'extract' ? `<${objectTypeSource(invoke.fields ?? {})}>` : '';
      out.mapped(pointer(...entry.pointer, 'invoke'), () =>
        w.writeLine(`${JSON.stringify(`llm.${invoke.llm}.${entry.name}`)}: fromLlm${typeArgument}(${JSON.stringify(invoke.llm)}),`));
    }
  });
  w.writeLine('},');
}

function writeNamedTable(out: MappedWriter, key: 'guards' | 'actions', list: string[], source: string, at: string) {
  const w = out.writer;
  w.writeLine(`${key}: {`);
  w.indent(() => {
    for (const name of list) out.mapped(`${at}/${name}`, () => w.writeLine(`${propertyKey(name)}: ${source}.${name},`));
  });
  w.writeLine('},');
}

function writeContextFactory(out: MappedWriter, spec: FlowSpec) {
  const w = out.writer;
  const defaults = Object.entries(spec.context).filter(([, t]) => t.default !== undefined);
  w.write('context: ({ input }) => ({');
  if (defaults.length === 0) {
    w.write(' ...input }),').newLine();
    return;
  }
  w.newLine();
  w.indent(() => {
    for (const [field, type] of defaults) {
      out.mapped(pointer('context', field, 'default'), () => w.writeLine(`${propertyKey(field)}: ${printLiteral(type.default)},`));
    }
    w.writeLine('...input,');
  });
  w.writeLine('}),');
}

function targetSource(spec: FlowSpec, byName: Map<string, StateEntry>, target: string): string {
  const entry = byName.get(target);
  return JSON.stringify(`#${spec.id}.${(entry?.path ?? [target]).join('.')}`);
}

function writeState(out: MappedWriter, entry: StateEntry, states: StateEntry[], byName: Map<string, StateEntry>, spec: FlowSpec) {
  const w = out.writer;
  const state = entry.spec;
  const at = entry.pointer;
  out.mapped(pointer(...at), () => {
    w.writeLine(`${propertyKey(entry.name)}: {`);
    w.indent(() => {
      if (entry.type === 'parallel' || entry.type === 'final') w.writeLine(`type: ${JSON.stringify(entry.type)},`);
      if (state.description !== undefined) w.writeLine(`description: ${JSON.stringify(state.description)},`);
      if (state.tags?.length) w.writeLine(`tags: ${printLiteral(state.tags)},`);
      if (entry.type === 'compound' && state.initial !== undefined) w.writeLine(`initial: ${JSON.stringify(state.initial)},`);
      if (state.entry) writeActionBlock(out, 'entry', state.entry, [...at, 'entry']);
      if (state.exit) writeActionBlock(out, 'exit', state.exit, [...at, 'exit']);
      if (state.invoke) writeInvoke(out, entry, state.invoke, spec, byName);
      const transitionContext = { out, spec, byName };
      if (state.on && Object.keys(state.on).length > 0) {
        w.writeLine('on: {');
        w.indent(() => {
          for (const [event, value] of Object.entries(state.on ?? {})) {
            writeTransitionProperty(transitionContext, JSON.stringify(event), value, 'event', [...at, 'on', event]);
          }
        });
        w.writeLine('},');
      }
      if (state.after && Object.keys(state.after).length > 0) {
        w.writeLine('after: {');
        w.indent(() => {
          for (const [delay, value] of Object.entries(state.after ?? {})) {
            writeTransitionProperty(transitionContext, delay, value, 'context', [...at, 'after', delay]);
          }
        });
        w.writeLine('},');
      }
      if (state.always !== undefined) writeTransitionProperty(transitionContext, 'always', state.always, 'context', [...at, 'always']);
      if (state.onDone !== undefined) writeTransitionProperty(transitionContext, 'onDone', state.onDone, 'context', [...at, 'onDone']);
      const children = states.filter((s) => s.parent === entry);
      if (children.length > 0) {
        w.writeLine('states: {');
        w.indent(() => children.forEach((child) => writeState(out, child, states, byName, spec)));
        w.writeLine('},');
      }
    });
    w.writeLine('},');
  });
}

interface TransitionContext {
  out: MappedWriter;
  spec: FlowSpec;
  byName: Map<string, StateEntry>;
}

function writeTransitionProperty(ctx: TransitionContext, key: string, value: TransitionSpec, site: ExpressionSite, at: Array<string | number>) {
  const w = ctx.out.writer;
  if (Array.isArray(value)) {
    w.writeLine(`${key}: [`);
    w.indent(() => value.forEach((t, i) => writeTransitionObject(ctx, '', t, site, [...at, i])));
    w.writeLine('],');
  } else {
    writeTransitionObject(ctx, `${key}: `, typeof value === 'string' ? { target: value } : value, site, at);
  }
}

function writeTransitionObject(ctx: TransitionContext, prefix: string, transition: TransitionObject, site: ExpressionSite, at: Array<string | number>) {
  const { out, spec, byName } = ctx;
  const w = out.writer;
  out.mapped(pointer(...at), () => {
    w.writeLine(`${prefix}{`);
    w.indent(() => {
      if (transition.target !== undefined) {
        out.mapped(pointer(...at, 'target'), () => w.writeLine(`target: ${targetSource(spec, byName, transition.target!)},`));
      }
      if (typeof transition.guard === 'string') {
        const guard = transition.guard;
        out.mapped(pointer(...at, 'guard'), () => w.writeLine(`guard: ${lambdaParams(site)} => ${expressionSource(guard, site)},`));
      } else if (transition.guard) {
        const ref = transition.guard.ref;
        out.mapped(pointer(...at, 'guard', 'ref'), () => w.writeLine(`guard: ${JSON.stringify(ref)},`));
      }
      writeActionList(out, 'actions', transition, site, at);
      if (transition.description !== undefined) w.writeLine(`description: ${JSON.stringify(transition.description)},`);
    });
    w.writeLine('},');
  });
}

function writeActionBlock(out: MappedWriter, key: 'entry' | 'exit', block: ActionBlock, at: Array<string | number>) {
  writeActionList(out, key, block, 'context', at);
}

function writeActionList(out: MappedWriter, key: string, block: ActionBlock, site: ExpressionSite, at: Array<string | number>) {
  const w = out.writer;
  const assigns = Object.entries(block.assign ?? {});
  const named = block.actions ?? [];
  if (assigns.length === 0 && named.length === 0) return;
  w.writeLine(`${key}: [`);
  w.indent(() => {
    if (assigns.length > 0) {
      w.writeLine('assign({');
      w.indent(() => {
        for (const [field, source] of assigns) {
          out.mapped(pointer(...at, 'assign', field), () => w.writeLine(`${propertyKey(field)}: ${lambdaParams(site)} => ${expressionSource(source, site)},`));
        }
      });
      w.writeLine('}),');
    }
    named.forEach((name, i) => out.mapped(pointer(...at, 'actions', i), () => w.writeLine(`${JSON.stringify(name)},`)));
  });
  w.writeLine('],');
}

function writeInvoke(out: MappedWriter, entry: StateEntry, invoke: InvokeSpec, spec: FlowSpec, byName: Map<string, StateEntry>) {
  const w = out.writer;
  const at = [...entry.pointer, 'invoke'];
  w.writeLine('invoke: {');
  w.indent(() => {
    w.writeLine(`id: ${JSON.stringify(entry.name)},`);
    if ('tool' in invoke) {
      out.mapped(pointer(...at, 'tool'), () => w.writeLine(`src: ${JSON.stringify(`tool.${invoke.tool}`)},`));
      out.mapped(pointer(...at, 'input'), () => {
        w.writeLine(`input: ({ context }): ToolCallInput<ToolInput<typeof ${machineNames(spec.id).tools}.${invoke.tool}>> => ({`);
        w.indent(() => {
          w.writeLine('args: {');
          w.indent(() => {
            for (const [field, source] of Object.entries(invoke.input ?? {})) {
              out.mapped(pointer(...at, 'input', field), () => w.writeLine(`${propertyKey(field)}: ${expressionSource(source, 'context')},`));
            }
          });
          w.writeLine('},');
          if (invoke.idempotencyKey !== undefined) {
            const key = invoke.idempotencyKey;
            out.mapped(pointer(...at, 'idempotencyKey'), () => w.writeLine(`idempotencyKey: String(${expressionSource(key, 'context')}),`));
          }
        });
        w.writeLine('}),');
      });
    } else {
      w.writeLine(`src: ${JSON.stringify(`llm.${invoke.llm}.${entry.name}`)},`);
      writeLlmInput(out, invoke, spec, at);
    }
    const ctx = { out, spec, byName };
    if (invoke.onDone !== undefined) writeTransitionProperty(ctx, 'onDone', invoke.onDone, 'done', [...at, 'onDone']);
    if (invoke.onError !== undefined) writeTransitionProperty(ctx, 'onError', invoke.onError, 'error', [...at, 'onError']);
  });
  w.writeLine('},');
}

function writeLlmInput(out: MappedWriter, invoke: LlmInvokeSpec, spec: FlowSpec, at: Array<string | number>) {
  const w = out.writer;
  const model = invoke.model ?? spec.models?.[invoke.llm] ?? spec.models?.default;
  w.writeLine(`input: ({ context }): ${LLM_REQUEST_TYPES[invoke.llm]} => ({`);
  w.indent(() => {
    w.writeLine(`kind: ${JSON.stringify(invoke.llm)},`);
    if (model !== undefined) out.mapped(pointer(...at, 'model'), () => w.writeLine(`model: ${JSON.stringify(model)},`));
    if (invoke.input !== undefined) {
      const text = invoke.input;
      out.mapped(pointer(...at, 'input'), () => w.writeLine(`text: asText(${expressionSource(text, 'context')}),`));
    }
    if (invoke.labels) out.mapped(pointer(...at, 'labels'), () => w.writeLine(`labels: ${printLiteral(invoke.labels)},`));
    if (invoke.fields) out.mapped(pointer(...at, 'fields'), () => w.writeLine(`fields: ${printLiteral(invoke.fields)},`));
    if (invoke.system !== undefined) {
      const system = invoke.system;
      out.mapped(pointer(...at, 'system'), () => w.writeLine(`system: ${templateSource(system)},`));
    }
    if (invoke.prompt !== undefined) {
      const prompt = invoke.prompt;
      out.mapped(pointer(...at, 'prompt'), () => w.writeLine(`prompt: ${templateSource(prompt)},`));
    }
    if (invoke.llm === 'agent') {
      w.writeLine(`tools: ${printLiteral(invoke.tools ?? [])},`);
      w.writeLine(`maxIterations: ${invoke.maxIterations ?? DEFAULT_AGENT_ITERATIONS},`);
    }
    const scripted = invoke.scripted;
    if (scripted && Object.keys(scripted).length > 0) {
      out.mapped(pointer(...at, 'scripted'), () => {
        w.writeLine('scripted: {');
        w.indent(() => {
          if (scripted.keywords) w.writeLine(`keywords: ${printLiteral(scripted.keywords)},`);
          if (scripted.patterns) w.writeLine(`patterns: ${printLiteral(scripted.patterns)},`);
          if (scripted.reply !== undefined) {
            const reply = scripted.reply;
            out.mapped(pointer(...at, 'scripted', 'reply'), () => w.writeLine(`reply: ${templateSource(reply)},`));
          }
        });
        w.writeLine('},');
      });
    }
  });
  w.writeLine('}),');
}

/** True when some `onError` guard or assign reads `error` (only then does the module need the FlowError type). */
function readsError(states: StateEntry[]): boolean {
  return states.some(({ spec: s }) => {
    if (s.invoke?.onError === undefined) return false;
    return normalizeTransition(s.invoke.onError, []).some(({ transition }) =>
      [typeof transition.guard === 'string' ? transition.guard : undefined, ...Object.values(transition.assign ?? {})]
        .some((source) => source !== undefined && expressionSource(source, 'error').includes('FlowError')));
  });
}

function usesAssignAnywhere(states: StateEntry[]): boolean {
  const hasAssign = (t: TransitionSpec | undefined): boolean => {
    if (t === undefined || typeof t === 'string') return false;
    return (Array.isArray(t) ? t : [t]).some((x) => Object.keys(x.assign ?? {}).length > 0);
  };
  return states.some(({ spec: s }) =>
    Object.keys(s.entry?.assign ?? {}).length > 0 || Object.keys(s.exit?.assign ?? {}).length > 0
    || Object.values(s.on ?? {}).some(hasAssign) || Object.values(s.after ?? {}).some(hasAssign)
    || hasAssign(s.always) || hasAssign(s.onDone) || hasAssign(s.invoke?.onDone) || hasAssign(s.invoke?.onError));
}
