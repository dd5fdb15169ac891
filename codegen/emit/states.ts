import {
  DEFAULT_AGENT_ITERATIONS,
  agentToolName,
  historyField,
  pointer,
  type AgentToolSpec,
  type ExpressionRoot,
  type InvokeSpec,
  type LlmInvokeSpec,
  type MachineInvokeSpec,
  type StateEntry,
  type ToolInvokeSpec,
} from '@flowing/spec';
import { camelCase, eventWord, memberAccess, propertyKey } from '../names.ts';
import { mapped, object, seq, type Doc, type Member } from './doc.ts';
import { templateDoc } from './expressions.ts';
import { literalDoc, stringDoc } from './literal.ts';
import { actionList, transitionDoc, type TransitionScope } from './transitions.ts';

/** The actor names a machine's invokes use: one per tool, one per model kind and output type. */
export interface ActorNames {
  /** Actor name by state name. */
  byState: ReadonlyMap<string, string>;
}

/** The `states` map of a machine or of a compound state: each child state's config, in spec order. */
export function statesDoc(scope: TransitionScope, actors: ActorNames, children: StateEntry[], all: StateEntry[]): Doc {
  return object(
    children.map((entry) => ({ key: propertyKey(entry.name), value: stateDoc(scope, actors, entry, all) })),
    true,
  );
}

function stateDoc(scope: TransitionScope, actors: ActorNames, entry: StateEntry, all: StateEntry[]): Doc {
  const state = entry.spec;
  const at = entry.pointer;
  const base = camelCase(entry.name);
  const members: Member[] = [];
  if (entry.type === 'parallel' || entry.type === 'final') members.push({ key: 'type', value: JSON.stringify(entry.type) });
  if (state.description !== undefined) members.push({ key: 'description', value: stringDoc(state.description) });
  if (state.tags?.length) members.push({ key: 'tags', value: literalDoc(state.tags) });
  if (entry.type === 'compound' && state.initial !== undefined) members.push({ key: 'initial', value: JSON.stringify(state.initial) });
  for (const key of ['entry', 'exit'] as const) {
    const block = state[key];
    const place = { name: `${base}${key === 'entry' ? 'Entry' : 'Exit'}`, order: scope.order.get(entry)!, site: 'context' as const };
    const actions = block && actionList(scope.table, place, block, [...at, key]);
    if (actions !== undefined) members.push({ key, value: actions });
  }
  if (state.invoke) members.push({ key: 'invoke', value: invokeDoc(scope, entry, state.invoke, actors.byState.get(entry.name)!) });
  if (state.output && entry.type === 'final' && !entry.parent) members.push({ key: 'output', value: outputDoc(scope, state.output, at) });
  const on = Object.entries(state.on ?? {});
  if (on.length > 0) {
    members.push({
      key: 'on',
      value: object(
        on.map(([event, value]) => ({
          key: propertyKey(event),
          value: transitionDoc(
            scope,
            { from: entry, site: 'event', name: `${base}${eventWord(event)}`, event, at: [...at, 'on', event] },
            value,
          ),
        })),
      ),
    });
  }
  const after = Object.entries(state.after ?? {});
  if (after.length > 0) {
    members.push({
      key: 'after',
      value: object(
        after.map(([delay, value]) => ({
          key: /^[1-9][0-9]*$/.test(delay) ? delay : propertyKey(delay),
          value: transitionDoc(
            scope,
            { from: entry, site: 'context', name: `${base}After${camelCase(delay)}ms`, at: [...at, 'after', delay] },
            value,
          ),
        })),
      ),
    });
  }
  if (state.always !== undefined) {
    members.push({
      key: 'always',
      value: transitionDoc(scope, { from: entry, site: 'context', name: `${base}Always`, at: [...at, 'always'] }, state.always),
    });
  }
  if (state.onDone !== undefined) {
    members.push({
      key: 'onDone',
      value: transitionDoc(scope, { from: entry, site: 'context', name: `${base}Finished`, at: [...at, 'onDone'] }, state.onDone),
    });
  }
  const children = all.filter((s) => s.parent === entry);
  if (children.length > 0) members.push({ key: 'states', value: statesDoc(scope, actors, children, all) });
  return mapped(pointer(...at), object(members, state.invoke !== undefined || children.length > 0));
}

function invokeDoc(scope: TransitionScope, entry: StateEntry, invoke: InvokeSpec, actor: string): Doc {
  const at = [...entry.pointer, 'invoke'];
  const base = camelCase(entry.name);
  const members: Member[] = [
    { key: 'id', value: JSON.stringify(entry.name) },
    {
      key: 'src',
      value: JSON.stringify(actor),
      pointer: pointer(...at, 'tool' in invoke ? 'tool' : 'machine' in invoke ? 'machine' : 'llm'),
    },
    'tool' in invoke
      ? { key: 'input', value: toolInputDoc(scope, entry, invoke, actor, at), pointer: pointer(...at, 'input') }
      : 'machine' in invoke
        ? { key: 'input', value: machineInputDoc(scope, invoke, actor, at), pointer: pointer(...at, 'input') }
        : { key: 'input', value: llmInputDoc(invoke, scope, actor, at), pointer: pointer(...at) },
  ];
  if (invoke.onDone !== undefined) {
    // An agent call with a history appends its new messages to that field on every way out of onDone; so does any
    // call whose memory summarises (its new messages are the summary it made first).
    const appends = 'llm' in invoke && (invoke.llm === 'agent' || invoke.memory?.summarize !== undefined);
    const history = appends && 'llm' in invoke && invoke.history !== undefined ? historyField(invoke.history) : undefined;
    members.push({
      key: 'onDone',
      value: transitionDoc(
        scope,
        { from: entry, site: 'done', name: `${base}Done`, actor, at: [...at, 'onDone'], ...(history ? { history } : {}) },
        invoke.onDone,
      ),
    });
  }
  if (invoke.onError !== undefined) {
    members.push({
      key: 'onError',
      value: transitionDoc(scope, { from: entry, site: 'error', name: `${base}Error`, at: [...at, 'onError'] }, invoke.onError),
    });
  }
  return object(members, true);
}

/**
 * `({ context }): Input<"tool.x"> => ({ args: toolArgs.state(context) })`. The mapping from context to the tool's
 * arguments is written once, as `toolArgs.<state>`, typed by the tool's input: the invoke passes what it returns, and
 * the runtime shows the same values to the person who approves a high-risk call.
 */
function toolInputDoc(scope: TransitionScope, entry: StateEntry, invoke: ToolInvokeSpec, actor: string, at: Array<string | number>): Doc {
  const reads = new Set<ExpressionRoot>();
  const argsReads = new Set<ExpressionRoot>();
  const args = Object.entries(invoke.input ?? {}).map(([field, source]) => {
    const compiled = scope.table.compile(source, 'context');
    compiled.reads.forEach((r) => argsReads.add(r));
    return { key: propertyKey(field), value: compiled.source, pointer: pointer(...at, 'input', field) };
  });
  scope.toolArgs.push({
    key: propertyKey(entry.name),
    value: seq(
      argsReads.has('context') ? `(context: ${scope.contextType})` : '()',
      `: Input<${JSON.stringify(actor)}>["args"] => (`,
      object(args),
      ')',
    ),
  });
  const call = `${memberAccess('toolArgs', entry.name)}(${argsReads.has('context') ? 'context' : ''})`;
  if (argsReads.has('context')) reads.add('context');
  const members: Member[] = [{ key: 'args', value: call }];
  if (invoke.idempotencyKey !== undefined) {
    const key = scope.table.compile(invoke.idempotencyKey, 'context');
    key.reads.forEach((r) => reads.add(r));
    members.push({ key: 'idempotencyKey', value: `String(${key.source})`, pointer: pointer(...at, 'idempotencyKey') });
  }
  return inputFunction(reads, actor, object(members));
}

/** The model request a state sends: kind, model, the text or prompts, and the scripted provider's rules. */
function llmInputDoc(invoke: LlmInvokeSpec, scope: TransitionScope, actor: string, at: Array<string | number>): Doc {
  const reads = new Set<ExpressionRoot>();
  const members: Member[] = [{ key: 'kind', value: JSON.stringify(invoke.llm) }];
  const model = invoke.model ?? scope.models?.[invoke.llm] ?? scope.models?.default;
  if (model !== undefined) members.push({ key: 'model', value: stringDoc(model), pointer: pointer(...at, 'model') });
  if (invoke.input !== undefined) {
    const text = scope.table.compile(invoke.input, 'context');
    text.reads.forEach((r) => reads.add(r));
    members.push({ key: 'text', value: `asText(${text.source})`, pointer: pointer(...at, 'input') });
    scope.table.uses.add('asText');
  } else if (invoke.llm === 'classify' || invoke.llm === 'extract') {
    // Read from the history instead (the validator allows no input only with one): the provider takes its last user message.
    members.push({ key: 'text', value: '""' });
  }
  if (invoke.history !== undefined) {
    const history = scope.table.compile(invoke.history, 'context');
    history.reads.forEach((r) => reads.add(r));
    members.push({ key: 'history', value: history.source, pointer: pointer(...at, 'history') });
  }
  if (invoke.labels) members.push({ key: 'labels', value: literalDoc(invoke.labels), pointer: pointer(...at, 'labels') });
  if (invoke.fields) members.push({ key: 'fields', value: literalDoc(invoke.fields), pointer: pointer(...at, 'fields') });
  const template = (source: string) =>
    templateDoc(source, reads, (helpers) => {
      scope.table.uses.add('asText');
      helpers.forEach((helper) => scope.table.uses.add(helper));
    });
  if (invoke.system !== undefined) members.push({ key: 'system', value: template(invoke.system), pointer: pointer(...at, 'system') });
  if (invoke.prompt !== undefined) members.push({ key: 'prompt', value: template(invoke.prompt), pointer: pointer(...at, 'prompt') });
  else if (invoke.llm === 'generate' || invoke.llm === 'agent') members.push({ key: 'prompt', value: '""' });
  if (invoke.temperature !== undefined)
    members.push({ key: 'temperature', value: String(invoke.temperature), pointer: pointer(...at, 'temperature') });
  if (invoke.topP !== undefined) members.push({ key: 'topP', value: String(invoke.topP), pointer: pointer(...at, 'topP') });
  if (invoke.maxTokens !== undefined)
    members.push({ key: 'maxTokens', value: String(invoke.maxTokens), pointer: pointer(...at, 'maxTokens') });
  if (invoke.memory !== undefined) members.push({ key: 'memory', value: literalDoc(invoke.memory), pointer: pointer(...at, 'memory') });
  if (invoke.llm === 'agent') {
    const tools = invoke.tools ?? [];
    members.push({ key: 'tools', value: literalDoc(tools.map(agentToolName)) });
    const bound = boundToolsDoc(scope, tools, reads, at);
    if (bound) members.push({ key: 'bound', value: bound });
    members.push({ key: 'maxIterations', value: String(invoke.maxIterations ?? DEFAULT_AGENT_ITERATIONS) });
    if (invoke.output) members.push({ key: 'output', value: literalDoc(invoke.output), pointer: pointer(...at, 'output') });
    if (invoke.handoffs?.length) members.push({ key: 'handoffs', value: literalDoc(invoke.handoffs), pointer: pointer(...at, 'handoffs') });
  }
  const scripted = invoke.scripted;
  if (scripted && Object.keys(scripted).length > 0) {
    const rules: Member[] = [];
    if (scripted.keywords) rules.push({ key: 'keywords', value: literalDoc(scripted.keywords) });
    if (scripted.patterns) rules.push({ key: 'patterns', value: literalDoc(scripted.patterns) });
    if (scripted.reply !== undefined)
      rules.push({ key: 'reply', value: template(scripted.reply), pointer: pointer(...at, 'scripted', 'reply') });
    if (scripted.handoffs) rules.push({ key: 'handoffs', value: literalDoc(scripted.handoffs) });
    members.push({ key: 'scripted', value: object(rules), pointer: pointer(...at, 'scripted') });
  }
  return inputFunction(reads, actor, object(members));
}

/**
 * `({ context }): Input<"machine.x"> => ({ field: ... })`: the child session's input, typed by the child's input
 * type, so a field the child's context lacks is a type error on its mapping.
 */
function machineInputDoc(scope: TransitionScope, invoke: MachineInvokeSpec, actor: string, at: Array<string | number>): Doc {
  const reads = new Set<ExpressionRoot>();
  const members = Object.entries(invoke.input ?? {}).map(([field, source]) => {
    const compiled = scope.table.compile(source, 'context');
    compiled.reads.forEach((r) => reads.add(r));
    return { key: propertyKey(field), value: compiled.source, pointer: pointer(...at, 'input', field) };
  });
  return inputFunction(reads, actor, object(members));
}

/** A top-level final state's `output`: `({ context }): XOutput => ({ ... })`, typed by the machine's declared output. */
function outputDoc(scope: TransitionScope, output: Record<string, string>, at: Array<string | number>): Doc {
  const reads = new Set<ExpressionRoot>();
  const members = Object.entries(output).map(([field, source]) => {
    const compiled = scope.table.compile(source, 'context');
    compiled.reads.forEach((r) => reads.add(r));
    return { key: propertyKey(field), value: compiled.source, pointer: pointer(...at, 'output', field) };
  });
  return seq(reads.has('context') ? '({ context })' : '()', `: ${scope.outputType} => (`, object(members), ')');
}

/**
 * `{ fetch_trip: { customer_id: context.customerId } satisfies Pick<ToolInput<typeof tools.fetch_trip>, "customer_id"> }`:
 * the arguments an agent's tools are bound to, each checked by tsc against the tool's input type (a wrong type or a
 * field the tool lacks is an error at the binding).
 */
function boundToolsDoc(
  scope: TransitionScope,
  tools: readonly AgentToolSpec[],
  reads: Set<ExpressionRoot>,
  at: Array<string | number>,
): Doc | undefined {
  const members: Member[] = [];
  tools.forEach((entry, i) => {
    if (typeof entry === 'string') return;
    const args = Object.entries(entry.bind).map(([field, source]) => {
      const compiled = scope.table.compile(source, 'context');
      compiled.reads.forEach((r) => reads.add(r));
      return { key: propertyKey(field), value: compiled.source, pointer: pointer(...at, 'tools', i, 'bind', field) };
    });
    const fields = Object.keys(entry.bind)
      .map((f) => JSON.stringify(f))
      .join(' | ');
    scope.table.uses.add('ToolInput');
    members.push({
      key: propertyKey(entry.tool),
      value: seq(object(args), ` satisfies Pick<ToolInput<typeof ${memberAccess(scope.registry, entry.tool)}>, ${fields}>`),
      pointer: pointer(...at, 'tools', i, 'bind'),
    });
  });
  return members.length > 0 ? object(members) : undefined;
}

function inputFunction(reads: Set<ExpressionRoot>, actor: string, body: Doc): Doc {
  return seq(reads.has('context') ? '({ context })' : '()', `: Input<${JSON.stringify(actor)}> => (`, body, ')');
}
