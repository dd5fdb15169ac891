import { parseExpression, parseTemplate, type ExpressionRoot } from './expression.ts';
import { hasErrors, pointer, problem, type SpecProblem } from './problems.ts';
import { fieldTypeToZod } from './fields.ts';
import {
  FlowSpecSchema,
  SPEC_VERSION,
  type FieldType,
  type FlowSpec,
  type InvokeSpec,
  type LlmInvokeSpec,
  type MachineInvokeSpec,
  type ToolInvokeSpec,
  type EmitSpec,
  agentToolName,
  handoffToolName,
} from './schema.ts';
import { checkMachineInvoke, checkOutputs } from './machine-checks.ts';
import { checkMemory } from './memory.ts';
import { schemaProblems } from './schema-issues.ts';
import { channelEventType, CHANNEL_PATTERN, LISTEN_PATTERN } from './channels.ts';
import { checkFallbackBranches, checkGraph, checkUnreachableBranches, type Report } from './graph-checks.ts';
import { machineIdProblem, RESERVED_NAMES, toolNameProblem } from './identifiers.ts';
import { listStates, transitionSites, type StateEntry } from './walk.ts';
import { computeCost } from './cost/bound.ts';
import { budgetProblems } from './cost/budget.ts';

/** What the validator needs to know about a tool from tools/. */
export interface ToolInfo {
  name: string;
  description?: string;
  idempotent: boolean;
  risk: 'low' | 'medium' | 'high';
  /** Input field names, and which of them are required (when known). */
  inputFields?: string[];
  requiredInputFields?: string[];
  /** Error codes the tool declares. */
  errors?: string[];
  /** Retries of the tool's definition (the cost bound counts them). */
  retries?: number;
}

export interface ValidateOptions {
  /** Tools available in tools/. When omitted, tool names and contracts are not checked. */
  tools?: Record<string, ToolInfo>;
  /**
   * The project's machines by id (their parsed specs). When given, machine invokes are checked against them: the
   * machine exists, its input fits the child's context, and no cycle of invokes leads back to this machine.
   */
  machines?: Record<string, FlowSpec>;
  /** The spec of a machine an invoke starts, for the cost bound a `budget` is checked against. */
  resolveMachine?: (machineId: string) => FlowSpec | undefined;
}

export interface ValidationResult {
  /** The parsed spec (defaults applied) when it matched the schema. */
  spec: FlowSpec | undefined;
  problems: SpecProblem[];
  ok: boolean;
}

export const MACHINE_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const EVENT_PATTERN = /^[A-Z][A-Z0-9_]*$/;
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
export const LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
const MAX_NAME_LENGTH = 64;
const MAX_DELAY_MS = 2 ** 31 - 1;
/**
 * How deep states may nest (a top-level state is at depth 1). XState's types recurse once per level, and TypeScript
 * gives up on the generated machine with TS2589 from 31 levels (generator 0.2.0; 40-45 with the earlier generator,
 * which crashed with "Debug Failure" at 50). 16 leaves a margin of about 2x for richer levels and future generators,
 * and is far deeper than a readable machine needs.
 */
export const MAX_STATE_DEPTH = 16;

/**
 * Validates an unknown value as a FlowSpec: the schema first, then the static checks.
 * @example const { ok, problems } = validateSpec(JSON.parse(text), { tools })
 */
export function validateSpec(input: unknown, options: ValidateOptions = {}): ValidationResult {
  if (input && typeof input === 'object' && 'specVersion' in input && (input as { specVersion: unknown }).specVersion !== SPEC_VERSION) {
    const found = JSON.stringify((input as { specVersion: unknown }).specVersion);
    const problems = [
      problem(
        'SPEC_VERSION_UNSUPPORTED',
        '/specVersion',
        `specVersion ${found} is not supported; this Flowing reads specVersion ${SPEC_VERSION}`,
      ),
    ];
    return { spec: undefined, problems, ok: false };
  }
  const protoKeys = findProtoKeys(input);
  if (protoKeys.length > 0) {
    const problems = protoKeys.map((at) => problem('SPEC_RESERVED_NAME', at, "'__proto__' cannot be used as a key anywhere in a spec"));
    return { spec: undefined, problems, ok: false };
  }
  const parsed = FlowSpecSchema.safeParse(input);
  if (!parsed.success) {
    return { spec: undefined, problems: schemaProblems(parsed.error.issues, input), ok: false };
  }
  const problems = checkSpec(parsed.data, options);
  if (parsed.data.budget !== undefined) problems.push(...checkBudget(parsed.data, options));
  return { spec: parsed.data, problems, ok: !hasErrors(problems) };
}

/** The cost bound against the spec's budget: a path over it is an error at the call that crosses it. */
function checkBudget(spec: FlowSpec, options: ValidateOptions): SpecProblem[] {
  const cost = computeCost(spec, options);
  return [...cost.problems, ...budgetProblems(spec, cost)];
}

function checkSpec(spec: FlowSpec, options: ValidateOptions): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const report: Report = (code, segments, message) => {
    problems.push(problem(code, pointer(...segments), message));
  };
  const checkName = (name: string, segments: Array<string | number>, kind: string, pattern = NAME_PATTERN) => {
    if (RESERVED_NAMES.has(name)) {
      report('SPEC_RESERVED_NAME', segments, `${kind} name '${name}' is reserved; choose another name`);
      return false;
    }
    if (name.length > MAX_NAME_LENGTH || !pattern.test(name)) {
      report(
        'SPEC_INVALID_IDENTIFIER',
        segments,
        `${kind} name ${JSON.stringify(name)} must match ${pattern.source} and be at most ${MAX_NAME_LENGTH} characters`,
      );
      return false;
    }
    return true;
  };
  /** A tool name also names its file (`tools/<name>.ts`) and the module's export (`query_order` -> `queryOrder`). */
  const checkToolName = (name: string, segments: Array<string | number>) => {
    if (!checkName(name, segments, 'tool', TOOL_NAME_PATTERN)) return false;
    const nameProblem = toolNameProblem(name);
    if (nameProblem === undefined) return true;
    report('SPEC_RESERVED_NAME', segments, nameProblem);
    return false;
  };
  const checkExpression = (source: string, roots: ExpressionRoot[], segments: Array<string | number>) => {
    const result = parseExpression(source, roots);
    if (!result.ok) report(result.error.code, segments, result.error.message);
  };
  const checkTemplate = (source: string, segments: Array<string | number>) => {
    const result = parseTemplate(source, ['context']);
    if (!result.ok) report(result.error.code, segments, result.error.message);
  };

  if (!MACHINE_ID_PATTERN.test(spec.id) || spec.id.length > MAX_NAME_LENGTH) {
    report('SPEC_INVALID_ID', ['id'], `machine id ${JSON.stringify(spec.id)} must be kebab-case, e.g. order-support`);
  } else {
    const idProblem = machineIdProblem(spec.id);
    if (idProblem !== undefined) report('SPEC_RESERVED_NAME', ['id'], idProblem);
  }

  for (const [field, type] of Object.entries(spec.context)) {
    if (checkName(field, ['context', field], 'context field')) checkFieldType(type, ['context', field], true);
  }
  for (const [event, payload] of Object.entries(spec.events)) {
    if (!checkName(event, ['events', event], 'event', EVENT_PATTERN)) continue;
    for (const [field, type] of Object.entries(payload)) {
      if (field === 'type') {
        report('SPEC_RESERVED_NAME', ['events', event, field], "payload field 'type' is reserved for the event name");
      } else if (checkName(field, ['events', event, field], 'payload field')) checkFieldType(type, ['events', event, field], false);
    }
  }
  for (const name of Object.keys(spec.guards ?? {})) checkName(name, ['guards', name], 'guard');
  for (const name of Object.keys(spec.actions ?? {})) checkName(name, ['actions', name], 'action');
  if (spec.channels) checkListening(spec.channels);

  /** What a machine receives: valid patterns, a string key field, an event declared for each pattern. */
  function checkListening(channels: NonNullable<FlowSpec['channels']>) {
    const key = spec.context[channels.key];
    if (!key || key.type !== 'string')
      report(
        'SPEC_CHANNEL_KEY',
        ['channels', 'key'],
        `channels.key must name a string context field (the session's key); '${channels.key}' ${key ? `is a ${key.type}` : 'is not declared in "context"'}`,
      );
    channels.listen.forEach((pattern, i) => {
      if (!LISTEN_PATTERN.test(pattern) || pattern.length > MAX_NAME_LENGTH) {
        report(
          'SPEC_CHANNEL_NAME',
          ['channels', 'listen', i],
          `${JSON.stringify(pattern)} must be a channel name or a prefix ending in .* (billing.*)`,
        );
        return;
      }
      const eventPrefix = channelEventType(pattern.endsWith('.*') ? pattern.slice(0, -1) : pattern);
      const matches = (event: string) => (pattern.endsWith('.*') ? event.startsWith(eventPrefix) : event === eventPrefix);
      if (!Object.keys(spec.events).some(matches))
        report(
          'SPEC_CHANNEL_NO_EVENTS',
          ['channels', 'listen', i],
          `no declared event receives '${pattern}': a message on channel a.b arrives as event A_B; declare it in "events" with its payload`,
        );
    });
  }

  function checkFieldType(type: FieldType, segments: Array<string | number>, allowDefault: boolean, allowConversation = allowDefault) {
    if (type.type === 'conversation' && !allowConversation)
      report(
        'SPEC_CONVERSATION_PLACE',
        [...segments, 'type'],
        'a conversation is a top-level context field (or a machine output field); use it there and read it with "history"',
      );
    if (type.type === 'enum') {
      if (!type.values || type.values.length === 0)
        report('SPEC_SCHEMA', [...segments, 'values'], 'an enum field needs a non-empty `values` list');
      type.values?.forEach((v, i) => {
        if (!LABEL_PATTERN.test(v) || v.length > MAX_NAME_LENGTH) {
          report(
            'SPEC_INVALID_IDENTIFIER',
            [...segments, 'values', i],
            `enum value ${JSON.stringify(v)} must match ${LABEL_PATTERN.source}`,
          );
        }
      });
      checkDistinct(type.values ?? [], [...segments, 'values'], 'enum value');
    }
    if (type.items) checkFieldType(type.items, [...segments, 'items'], false);
    for (const [field, child] of Object.entries(type.fields ?? {})) {
      if (checkName(field, [...segments, 'fields', field], 'field')) checkFieldType(child, [...segments, 'fields', field], false);
    }
    if (type.default !== undefined) {
      if (!allowDefault) report('SPEC_INVALID_DEFAULT', [...segments, 'default'], 'defaults are only allowed on top-level context fields');
      else if (!fieldTypeToZod(type).safeParse(type.default).success) {
        report('SPEC_INVALID_DEFAULT', [...segments, 'default'], `default ${truncate(JSON.stringify(type.default))} is not a ${type.type}`);
      }
    }
  }

  function checkDistinct(values: readonly string[], segments: Array<string | number>, kind: string) {
    const seen = new Set<string>();
    values.forEach((v, i) => {
      if (seen.has(v)) report('SPEC_DUPLICATE_NAME', [...segments, i], `${kind} ${JSON.stringify(v)} appears more than once`);
      seen.add(v);
    });
  }

  // States: names, uniqueness, shape.
  const states = listStates(spec);
  const byName = new Map<string, StateEntry>();
  // States whose name is already refused: a transition to one is not also reported as an unknown target.
  const misnamed = new Set<string>();
  for (const entry of states) {
    if (entry.path.length === MAX_STATE_DEPTH + 1) {
      const top = truncate(entry.path[0]!);
      report(
        'SPEC_NESTING_TOO_DEEP',
        entry.pointer,
        `state '${truncate(entry.name)}' is nested ${entry.path.length} levels deep; states ` +
          `nest at most ${MAX_STATE_DEPTH} levels (deeper machines do not type-check). Flatten the states under '${top}'`,
      );
    }
    if (!checkName(entry.name, entry.pointer, 'state')) {
      misnamed.add(entry.name);
      continue;
    }
    if (byName.has(entry.name)) {
      report(
        'SPEC_DUPLICATE_STATE',
        entry.pointer,
        `state name '${entry.name}' is already used at ${pointer(...byName.get(entry.name)!.pointer)}; state names are unique across the machine`,
      );
    } else byName.set(entry.name, entry);
  }

  const rootChildren = Object.keys(spec.states);
  if (rootChildren.length === 0) report('SPEC_SCHEMA', ['states'], 'a machine needs at least one state');
  if (spec.initial === undefined) {
    if (rootChildren.length > 0)
      report('SPEC_MISSING_INITIAL', ['initial'], `the machine has no initial state; set "initial" to one of: ${rootChildren.join(', ')}`);
  } else if (!rootChildren.includes(spec.initial)) {
    report('SPEC_UNKNOWN_INITIAL', ['initial'], `initial state '${spec.initial}' is not a top-level state`);
  }

  for (const entry of states) checkState(entry);

  function checkState(entry: StateEntry) {
    const { spec: state, pointer: at, type } = entry;
    const children = Object.keys(state.states ?? {});
    if (type === 'compound') {
      if (children.length === 0) report('SPEC_INVALID_STATE_SHAPE', [...at, 'type'], 'a compound state needs child `states`');
      else if (state.initial === undefined)
        report(
          'SPEC_MISSING_INITIAL',
          [...at, 'initial'],
          `compound state '${entry.name}' has no initial child; set "initial" to one of: ${children.join(', ')}`,
        );
      else if (!children.includes(state.initial))
        report('SPEC_UNKNOWN_INITIAL', [...at, 'initial'], `initial '${state.initial}' is not a child of '${entry.name}'`);
    } else if (type === 'parallel') {
      if (children.length < 1) report('SPEC_INVALID_STATE_SHAPE', [...at, 'type'], 'a parallel state needs child regions in `states`');
      if (state.initial !== undefined)
        report('SPEC_INVALID_STATE_SHAPE', [...at, 'initial'], 'a parallel state enters all its regions; remove `initial`');
    } else {
      if (children.length > 0) report('SPEC_INVALID_STATE_SHAPE', [...at, 'states'], `a ${type} state cannot have child states`);
      if (state.initial !== undefined) report('SPEC_INVALID_STATE_SHAPE', [...at, 'initial'], `a ${type} state has no \`initial\``);
    }
    if (state.onDone !== undefined && type !== 'compound' && type !== 'parallel') {
      report('SPEC_INVALID_STATE_SHAPE', [...at, 'onDone'], 'only compound and parallel states have a state-level "onDone"');
    }
    if (type === 'final') {
      for (const key of ['on', 'after', 'always', 'invoke'] as const) {
        if (state[key] !== undefined) report('SPEC_INVALID_STATE_SHAPE', [...at, key], `a final state cannot have \`${key}\``);
      }
    }
    state.tags?.forEach((tag, i) => {
      if (!LABEL_PATTERN.test(tag) || tag.length > MAX_NAME_LENGTH)
        report('SPEC_INVALID_IDENTIFIER', [...at, 'tags', i], `tag ${JSON.stringify(tag)} must match ${LABEL_PATTERN.source}`);
    });
    checkDistinct(state.tags ?? [], [...at, 'tags'], 'tag');
    for (const key of ['entry', 'exit'] as const) {
      const block = state[key];
      if (!block) continue;
      checkAssign(block.assign, ['context'], [...at, key, 'assign']);
      checkActions(block.actions, [...at, key, 'actions']);
      checkEmits(block.emit, ['context'], [...at, key, 'emit']);
    }
    for (const delay of Object.keys(state.after ?? {})) {
      const ms = Number(delay);
      if (!/^[1-9][0-9]*$/.test(delay) || ms > MAX_DELAY_MS)
        report(
          'SPEC_INVALID_DELAY',
          [...at, 'after', delay],
          `delay '${delay}' must be a whole number of milliseconds between 1 and ${MAX_DELAY_MS}`,
        );
    }
    for (const site of transitionSites(state)) {
      if (site.kind === 'on' && site.key !== undefined && !Object.hasOwn(spec.events, site.key)) {
        report('SPEC_UNDECLARED_EVENT', [...at, ...site.pointer], `event '${site.key}' is not declared in "events"`);
      }
      const roots: ExpressionRoot[] =
        site.kind === 'on'
          ? ['context', 'event']
          : site.kind === 'onDone'
            ? ['context', 'output']
            : site.kind === 'onError'
              ? ['context', 'error']
              : ['context'];
      for (const { transition, pointer: tp, targetPointer } of site.transitions) {
        const here = [...at, ...tp];
        if (transition.target !== undefined && !byName.has(transition.target) && !misnamed.has(transition.target)) {
          report('SPEC_UNKNOWN_TARGET', [...at, ...targetPointer], `target '${transition.target}' is not a state of this machine`);
        }
        if (typeof transition.guard === 'string') checkExpression(transition.guard, roots, [...here, 'guard']);
        else if (transition.guard && !Object.hasOwn(spec.guards ?? {}, transition.guard.ref)) {
          report('SPEC_UNKNOWN_GUARD', [...here, 'guard', 'ref'], `named guard '${transition.guard.ref}' is not declared in "guards"`);
        }
        checkAssign(transition.assign, roots, [...here, 'assign']);
        checkActions(transition.actions, [...here, 'actions']);
        checkEmits(transition.emit, roots, [...here, 'emit']);
      }
    }
    if (state.invoke) checkInvoke(state.invoke, [...at, 'invoke']);
  }

  function checkAssign(assign: Record<string, string> | undefined, roots: ExpressionRoot[], segments: Array<string | number>) {
    for (const [field, source] of Object.entries(assign ?? {})) {
      if (!Object.hasOwn(spec.context, field))
        report('SPEC_UNKNOWN_CONTEXT_FIELD', [...segments, field], `context field '${field}' is not declared in "context"`);
      checkExpression(source, roots, [...segments, field]);
    }
  }

  function checkEmits(emits: EmitSpec[] | undefined, roots: ExpressionRoot[], segments: Array<string | number>) {
    emits?.forEach((emit, i) => {
      if (!CHANNEL_PATTERN.test(emit.channel) || emit.channel.length > MAX_NAME_LENGTH)
        report(
          'SPEC_CHANNEL_NAME',
          [...segments, i, 'channel'],
          `channel ${JSON.stringify(emit.channel)} must be dot-separated snake_case words (billing.need_order)`,
        );
      checkExpression(emit.key, roots, [...segments, i, 'key']);
      for (const [field, source] of Object.entries(emit.data ?? {})) checkExpression(source, roots, [...segments, i, 'data', field]);
    });
  }

  function checkActions(actions: string[] | undefined, segments: Array<string | number>) {
    actions?.forEach((name, i) => {
      if (!Object.hasOwn(spec.actions ?? {}, name))
        report('SPEC_UNKNOWN_ACTION', [...segments, i], `named action '${name}' is not declared in "actions"`);
    });
  }

  function checkInvoke(invoke: InvokeSpec, at: Array<string | number>) {
    if (invoke.onDone === undefined)
      report('SPEC_INVOKE_WITHOUT_ONDONE', at, 'an invoke needs "onDone": where to go when the call succeeds');
    if (invoke.onError === undefined)
      report('SPEC_INVOKE_WITHOUT_ONERROR', at, 'an invoke without "onError" leaves the session stuck when the call fails');
    if ('tool' in invoke) checkToolInvoke(invoke, at);
    else if ('machine' in invoke) checkMachineInvokeHere(invoke, at);
    else checkLlmInvoke(invoke, at);
  }

  function checkMachineInvokeHere(invoke: MachineInvokeSpec, at: Array<string | number>) {
    if (!MACHINE_ID_PATTERN.test(invoke.machine) || invoke.machine.length > MAX_NAME_LENGTH) {
      report('SPEC_INVALID_ID', [...at, 'machine'], `machine id ${JSON.stringify(invoke.machine)} must be kebab-case, e.g. billing`);
      return;
    }
    for (const [field, source] of Object.entries(invoke.input ?? {})) {
      checkName(field, [...at, 'input', field], 'machine input field');
      checkExpression(source, ['context'], [...at, 'input', field]);
    }
    if (options.machines) checkMachineInvoke(spec, invoke, at, options.machines, report);
  }

  function checkToolInvoke(invoke: ToolInvokeSpec, at: Array<string | number>) {
    if (!checkToolName(invoke.tool, [...at, 'tool'])) return;
    for (const [field, source] of Object.entries(invoke.input ?? {})) {
      checkName(field, [...at, 'input', field], 'tool input field');
      checkExpression(source, ['context'], [...at, 'input', field]);
    }
    if (invoke.idempotencyKey !== undefined) checkExpression(invoke.idempotencyKey, ['context'], [...at, 'idempotencyKey']);
    const tool = toolInfo(options, invoke.tool);
    if (!options.tools) return;
    if (!tool) {
      report(
        'SPEC_UNKNOWN_TOOL',
        [...at, 'tool'],
        `tool '${invoke.tool}' is not defined in tools/ (create tools/${invoke.tool}.ts or run codegen to scaffold it)`,
      );
      return;
    }
    if (invoke.retries && invoke.retries > 0 && !tool.idempotent && invoke.idempotencyKey === undefined) {
      report(
        'SPEC_RETRIES_NOT_IDEMPOTENT',
        [...at, 'retries'],
        `tool '${tool.name}' is not idempotent; retrying could repeat its side effect. Remove "retries" or pass an "idempotencyKey"`,
      );
    }
    if (tool.inputFields) {
      for (const field of Object.keys(invoke.input ?? {})) {
        if (!tool.inputFields.includes(field))
          report(
            'SPEC_UNKNOWN_TOOL_INPUT',
            [...at, 'input', field],
            `tool '${tool.name}' has no input field '${field}' (it has: ${tool.inputFields.join(', ') || 'none'})`,
          );
      }
      for (const field of tool.requiredInputFields ?? []) {
        if (!(field in (invoke.input ?? {})))
          report(
            'SPEC_MISSING_TOOL_INPUT',
            [...at, 'input'],
            `tool '${tool.name}' requires input field '${field}'; map it to an expression`,
          );
      }
    }
  }

  function checkLlmInvoke(invoke: LlmInvokeSpec, at: Array<string | number>) {
    // With a history, the conversation is the text to read: its last user message stands in for `input` or `prompt`.
    const needs: Record<LlmInvokeSpec['llm'], Array<keyof LlmInvokeSpec>> = invoke.history === undefined
      ? { classify: ['labels', 'input'], extract: ['fields', 'input'], generate: ['prompt'], agent: ['prompt'] }
      : { classify: ['labels'], extract: ['fields'], generate: [], agent: [] };
    const allowed: Record<LlmInvokeSpec['llm'], Array<keyof LlmInvokeSpec>> = {
      classify: ['labels', 'input', 'prompt', 'system', 'history', 'temperature', 'topP'],
      extract: ['fields', 'input', 'prompt', 'system', 'history', 'temperature', 'topP'],
      generate: ['prompt', 'system', 'history', 'temperature', 'topP'],
      agent: ['prompt', 'system', 'history', 'tools', 'handoffs', 'maxIterations', 'output', 'temperature', 'topP'],
    };
    for (const key of needs[invoke.llm]) {
      const value = invoke[key];
      if (
        value === undefined ||
        (Array.isArray(value) && value.length === 0) ||
        (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)
      ) {
        report('SPEC_LLM_INCOMPLETE', [...at, key], `a ${invoke.llm} call needs "${key}"`);
      }
    }
    for (const key of [
      'labels',
      'input',
      'fields',
      'prompt',
      'system',
      'tools',
      'handoffs',
      'maxIterations',
      'output',
      'temperature',
      'topP',
    ] as const) {
      if (invoke[key] !== undefined && !allowed[invoke.llm].includes(key))
        report('SPEC_LLM_FIELD_NOT_ALLOWED', [...at, key], `a ${invoke.llm} call does not use "${key}"`);
    }
    if (invoke.input !== undefined) checkExpression(invoke.input, ['context'], [...at, 'input']);
    if (invoke.history !== undefined) checkHistory(invoke, at);
    if (invoke.prompt !== undefined) checkTemplate(invoke.prompt, [...at, 'prompt']);
    if (invoke.system !== undefined) checkTemplate(invoke.system, [...at, 'system']);
    invoke.labels?.forEach((label, i) => {
      if (!LABEL_PATTERN.test(label) || label.length > MAX_NAME_LENGTH)
        report('SPEC_INVALID_IDENTIFIER', [...at, 'labels', i], `label ${JSON.stringify(label)} must match ${LABEL_PATTERN.source}`);
    });
    checkDistinct(invoke.labels ?? [], [...at, 'labels'], 'label');
    for (const [field, type] of Object.entries(invoke.fields ?? {})) {
      if (checkName(field, [...at, 'fields', field], 'extracted field')) checkFieldType(type, [...at, 'fields', field], false);
    }
    for (const [field, type] of Object.entries(invoke.output ?? {})) {
      if (checkName(field, [...at, 'output', field], 'output field')) checkFieldType(type, [...at, 'output', field], false);
    }
    if (invoke.llm === 'agent' && (invoke.tools ?? []).length === 0 && (invoke.handoffs ?? []).length === 0)
      report('SPEC_LLM_INCOMPLETE', [...at, 'tools'], 'an agent call needs "tools" or "handoffs"');
    checkHandoffs(invoke, at);
    checkDistinct((invoke.tools ?? []).map(agentToolName), [...at, 'tools'], 'tool');
    invoke.tools?.forEach((entry, i) => {
      const name = agentToolName(entry);
      const here = typeof entry === 'string' ? [...at, 'tools', i] : [...at, 'tools', i, 'tool'];
      if (!checkToolName(name, here)) return;
      if (typeof entry !== 'string') checkBinding(entry.bind, toolInfo(options, name), [...at, 'tools', i, 'bind']);
      // A high-risk tool may be handed to an agent: the model only proposes its calls, and a person approves each one.
      if (options.tools && !toolInfo(options, name)) report('SPEC_UNKNOWN_TOOL', here, `tool '${name}' is not defined in tools/`);
    });
    const scripted = invoke.scripted;
    const enumValues = new Set(Object.values({ ...invoke.fields, ...invoke.output }).flatMap((type) => type.values ?? []));
    for (const label of Object.keys(scripted?.keywords ?? {})) {
      if (!invoke.labels?.includes(label) && !enumValues.has(label))
        report(
          'SPEC_LLM_FIELD_NOT_ALLOWED',
          [...at, 'scripted', 'keywords', label],
          `scripted keywords name '${label}', which is neither a label nor a value of an enum field`,
        );
    }
    for (const [field, source] of Object.entries(scripted?.patterns ?? {})) {
      if (!Object.hasOwn(invoke.fields ?? invoke.output ?? {}, field.split('.')[0]!))
        report(
          'SPEC_LLM_FIELD_NOT_ALLOWED',
          [...at, 'scripted', 'patterns', field],
          `scripted pattern for '${field}', which is not one of the fields`,
        );
      try {
        new RegExp(source);
      } catch (err) {
        report(
          'SPEC_INVALID_REGEX',
          [...at, 'scripted', 'patterns', field],
          `pattern is not a valid regular expression: ${(err as Error).message}`,
        );
      }
    }
    if (scripted?.reply !== undefined) checkTemplate(scripted.reply, [...at, 'scripted', 'reply']);
    if (invoke.memory !== undefined) {
      checkMemory(invoke, at, report);
      const keep = invoke.memory.summarize?.keep;
      const keepAt = [...at, 'memory', 'summarize', 'keep'];
      if (Array.isArray(keep)) keep.forEach((fact, i) => checkName(fact, [...keepAt, i], 'kept fact'));
      else
        for (const [fact, type] of Object.entries(keep ?? {}))
          if (checkName(fact, [...keepAt, fact], 'kept fact')) checkFieldType(type, [...keepAt, fact], false);
    }
  }

  /** Handoff targets: names, once each, their `transfer_to_` tools not clashing with the agent's tools; scripted keys declared. */
  function checkHandoffs(invoke: LlmInvokeSpec, at: Array<string | number>) {
    const handoffs = invoke.handoffs ?? [];
    const tools = new Set((invoke.tools ?? []).map(agentToolName));
    handoffs.forEach((target, i) => {
      if (!checkName(target, [...at, 'handoffs', i], 'handoff')) return;
      if (tools.has(handoffToolName(target)))
        report(
          'SPEC_HANDOFF_CLASH',
          [...at, 'handoffs', i],
          `handoff '${target}' is offered to the model as tool '${handoffToolName(target)}', which is also one of the agent's tools`,
        );
    });
    checkDistinct(handoffs, [...at, 'handoffs'], 'handoff');
    for (const target of Object.keys(invoke.scripted?.handoffs ?? {})) {
      if (!handoffs.includes(target))
        report(
          'SPEC_LLM_FIELD_NOT_ALLOWED',
          [...at, 'scripted', 'handoffs', target],
          `scripted handoff keywords name '${target}', which is not one of the call's handoffs (${handoffs.join(', ') || 'none'})`,
        );
    }
  }

  /** `history` reads a conversation field as it is: `context.<field>`, the field declared with type conversation. */
  function checkHistory(invoke: LlmInvokeSpec, at: Array<string | number>) {
    const here = [...at, 'history'];
    const field = historyField(invoke.history!);
    if (field === undefined) {
      const parsed = parseExpression(invoke.history!, ['context']);
      if (!parsed.ok) report(parsed.error.code, here, parsed.error.message);
      else
        report(
          'SPEC_HISTORY_NOT_CONVERSATION',
          here,
          `history must be context.<field> naming a conversation field, not ${truncate(JSON.stringify(invoke.history))}`,
        );
      return;
    }
    const type = Object.hasOwn(spec.context, field) ? spec.context[field] : undefined;
    if (type?.type !== 'conversation')
      report(
        'SPEC_HISTORY_NOT_CONVERSATION',
        here,
        `history reads context field '${field}', which ${type ? `is a ${type.type}` : 'is not declared in "context"'}; declare it with "type": "conversation"`,
      );
    if (invoke.llm === 'agent' && invoke.output && Object.hasOwn(invoke.output, 'messages'))
      report(
        'SPEC_RESERVED_NAME',
        [...at, 'output', 'messages'],
        "output field 'messages' is reserved: an agent call with a history returns its new messages there",
      );
  }

  /** A bound tool's arguments: expressions over context, naming input fields the tool has (when its contract is known). */
  function checkBinding(bind: Record<string, string>, tool: ToolInfo | undefined, at: Array<string | number>) {
    if (Object.keys(bind).length === 0) report('SPEC_LLM_INCOMPLETE', at, 'a bound tool needs at least one argument in "bind"');
    for (const [field, source] of Object.entries(bind)) {
      checkExpression(source, ['context'], [...at, field]);
      if (tool?.inputFields && !tool.inputFields.includes(field))
        report(
          'SPEC_UNKNOWN_TOOL_INPUT',
          [...at, field],
          `tool '${tool.name}' has no input field '${field}' to bind (it has: ${tool.inputFields.join(', ') || 'none'})`,
        );
    }
  }

  for (const [field, type] of Object.entries(spec.output ?? {})) {
    if (checkName(field, ['output', field], 'output field')) checkFieldType(type, ['output', field], false, true);
  }
  for (const entry of states) {
    for (const [field, source] of Object.entries(entry.spec.output ?? {}))
      checkExpression(source, ['context'], [...entry.pointer, 'output', field]);
  }
  checkOutputs(spec, states, report);
  checkGraph(spec, states, byName, options.tools, report);
  checkFallbackBranches(states, report);
  checkUnreachableBranches(states, report);

  for (const key of Object.keys(spec.layout ?? {})) {
    if (!states.some((s) => s.path.join('.') === key))
      report('SPEC_LAYOUT_UNKNOWN_STATE', ['layout', key], `layout names '${key}', which is not a state path`);
  }
  return problems;
}

/**
 * The context field a model call's `history` names (`context.conversation` -> `conversation`), or undefined when it
 * is not a plain read of one context field.
 */
export function historyField(history: string): string | undefined {
  const parsed = parseExpression(history, ['context']);
  if (!parsed.ok) return undefined;
  const { ast } = parsed;
  return ast.kind === 'member' && ast.object.kind === 'root' && typeof ast.property === 'string' ? ast.property : undefined;
}

/** The catalog entry of a tool; own entries only, so names like `constructor` never find Object's members. */
function toolInfo(options: ValidateOptions, name: string): ToolInfo | undefined {
  return options.tools && Object.hasOwn(options.tools, name) ? options.tools[name] : undefined;
}

/** JSON pointers of every own `__proto__` key (JSON.parse creates them; copying them would set a prototype). */
function findProtoKeys(input: unknown): string[] {
  const found: string[] = [];
  const stack: Array<{ value: unknown; at: Array<string | number> }> = [{ value: input, at: [] }];
  while (stack.length > 0 && found.length < 20) {
    const { value, at } = stack.pop()!;
    if (!value || typeof value !== 'object') continue;
    for (const key of Object.keys(value)) {
      if (key === '__proto__') found.push(pointer(...at, key));
      else stack.push({ value: (value as Record<string, unknown>)[key], at: [...at, key] });
    }
  }
  return found;
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
