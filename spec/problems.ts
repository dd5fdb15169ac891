/**
 * Every problem code the spec layer reports, with its severity and a one-line explanation.
 * This table is the documentation of the codes: codes are stable, messages may improve.
 */
export const SPEC_PROBLEM_CODES = {
  SPEC_JSON_SYNTAX: { severity: 'error', summary: 'The file is not valid JSON.' },
  SPEC_DUPLICATE_KEY: { severity: 'error', summary: 'The same key appears twice in one JSON object (the first would be silently lost).' },
  SPEC_SCHEMA: { severity: 'error', summary: 'A field is missing, has the wrong type, or is not part of FlowSpec v1.' },
  SPEC_VERSION_UNSUPPORTED: { severity: 'error', summary: 'specVersion is not one this version of Flowing reads.' },
  SPEC_INVALID_ID: { severity: 'error', summary: 'The machine id is not kebab-case (a-z, 0-9, single dashes).' },
  SPEC_INVALID_IDENTIFIER: {
    severity: 'error',
    summary: 'A state, event, field, tool, guard, action, tag or label name is not a valid identifier.',
  },
  SPEC_RESERVED_NAME: {
    severity: 'error',
    summary:
      'A name is reserved: an Object.prototype member (__proto__, constructor, toString ...), a machine id or tool name whose generated export would be a JavaScript reserved word (class, default, import ...), or a tool name the tool module imports (z, defineTool).',
  },
  SPEC_NESTING_TOO_DEEP: {
    severity: 'error',
    summary: 'States nest deeper than MAX_STATE_DEPTH (16) levels; generated code that deep does not type-check.',
  },
  SPEC_DUPLICATE_STATE: { severity: 'error', summary: 'Two states share a name; state names are unique across the whole machine.' },
  SPEC_DUPLICATE_NAME: {
    severity: 'error',
    summary: 'A list that must hold distinct names (labels, tags, agent tools, actions) repeats one.',
  },
  SPEC_MISSING_INITIAL: { severity: 'error', summary: 'A machine or compound state with child states has no `initial`.' },
  SPEC_UNKNOWN_INITIAL: { severity: 'error', summary: '`initial` names a state that is not a child of this state.' },
  SPEC_UNKNOWN_TARGET: { severity: 'error', summary: 'A transition targets a state that does not exist.' },
  SPEC_UNDECLARED_EVENT: { severity: 'error', summary: 'A transition handles an event that is not declared in `events`.' },
  SPEC_UNKNOWN_CONTEXT_FIELD: { severity: 'error', summary: 'An assign writes a context field that is not declared in `context`.' },
  SPEC_UNKNOWN_GUARD: { severity: 'error', summary: 'A transition references a named guard not declared in `guards`.' },
  SPEC_UNKNOWN_ACTION: {
    severity: 'error',
    summary: 'A transition or entry/exit block references a named action not declared in `actions`.',
  },
  SPEC_UNKNOWN_TOOL: { severity: 'error', summary: 'An invoke or agent names a tool that tools/ does not define.' },
  SPEC_UNKNOWN_TOOL_INPUT: { severity: 'error', summary: 'An input mapping names a field that the tool input does not have.' },
  SPEC_MISSING_TOOL_INPUT: { severity: 'error', summary: 'A required tool input field has no mapping.' },
  SPEC_INVOKE_WITHOUT_ONDONE: {
    severity: 'error',
    summary: 'An invoke has no `onDone`: the state could never leave when the call succeeds.',
  },
  SPEC_INVOKE_WITHOUT_ONERROR: {
    severity: 'warning',
    summary: 'An invoke has no `onError`: a failed call leaves the session stuck in this state.',
  },
  SPEC_RETRIES_NOT_IDEMPOTENT: {
    severity: 'error',
    summary: '`retries` on a tool that is not idempotent and has no idempotency key: a retry could repeat a side effect.',
  },
  SPEC_RISKY_TOOL_NOT_APPROVED: {
    severity: 'error',
    summary: 'A high-risk tool is invoked by a state that can be entered other than by an APPROVE event.',
  },
  SPEC_AMBIGUOUS_APPROVAL: {
    severity: 'error',
    summary:
      "One state's APPROVE can lead to more than one state running a high-risk tool: a person approves one call, so each needs its own approval state.",
  },
  SPEC_LLM_INCOMPLETE: {
    severity: 'error',
    summary:
      'A model call lacks what its kind needs (classify: labels, input; extract: fields, input; generate/agent: prompt; agent: tools or handoffs).',
  },
  SPEC_HANDOFF_CLASH: {
    severity: 'error',
    summary: "An agent's handoff is offered as tool `transfer_to_<name>`, and the agent already has a tool of that name.",
  },
  SPEC_LLM_FIELD_NOT_ALLOWED: { severity: 'error', summary: 'A model call carries a field its kind does not use.' },
  SPEC_HISTORY_NOT_CONVERSATION: {
    severity: 'error',
    summary: "A model call's `history` is not `context.<field>` naming a context field of type conversation.",
  },
  SPEC_CONVERSATION_PLACE: {
    severity: 'error',
    summary: 'A field of type conversation is declared where only top-level context and machine output fields may hold one.',
  },
  SPEC_INVALID_MEMORY: {
    severity: 'error',
    summary:
      "A model call's `memory` is inconsistent: a window under one turn, `summarize.after` not above the window, or a kept fact named `content`.",
  },
  SPEC_MEMORY_WITHOUT_HISTORY: { severity: 'error', summary: 'A model call declares `memory` but reads no conversation (`history`).' },
  SPEC_INVALID_DELAY: { severity: 'error', summary: 'An `after` key is not a whole number of milliseconds (1 to 2^31-1).' },
  SPEC_INVALID_STATE_SHAPE: {
    severity: 'error',
    summary:
      'A state field contradicts its type (a final state with transitions, a parallel state with `initial`, an atomic state with children).',
  },
  SPEC_INVALID_DEFAULT: { severity: 'error', summary: 'A context default does not match the field type.' },
  SPEC_INVALID_REGEX: { severity: 'error', summary: 'A scripted extraction pattern is not a valid regular expression.' },
  SPEC_EXPRESSION_SYNTAX: { severity: 'error', summary: 'An expression does not parse.' },
  SPEC_EXPRESSION_FORBIDDEN: {
    severity: 'error',
    summary:
      'An expression uses syntax outside the safe subset (calls, assignment, `this`, computed access by non-literal, prototype access).',
  },
  SPEC_EXPRESSION_UNKNOWN_ROOT: {
    severity: 'error',
    summary: 'An expression reads a name other than the roots available at that place (context, event, output, error).',
  },
  SPEC_TEMPLATE_SYNTAX: { severity: 'error', summary: 'A prompt template has an unclosed or empty {{ }} hole.' },
  SPEC_UNREACHABLE_STATE: { severity: 'warning', summary: 'No path of transitions leads to this state.' },
  SPEC_NO_FALLBACK_BRANCH: {
    severity: 'warning',
    summary:
      'Every branch of an onDone/onError list has a guard: when all are false the done or error event is refused and the session cannot continue.',
  },
  SPEC_UNREACHABLE_BRANCH: {
    severity: 'warning',
    summary: 'A branch of a transition list comes after a branch without a guard, which always wins: it is never taken.',
  },
  SPEC_DEAD_END: { severity: 'warning', summary: 'A non-final state has no way out (no transition, no invoke, no final child).' },
  SPEC_UNKNOWN_MACHINE: { severity: 'error', summary: 'A machine invoke names a machine the project does not have.' },
  SPEC_MACHINE_CYCLE: {
    severity: 'error',
    summary: 'Machine invokes form a cycle (a machine that, through its children, invokes itself); recursion is refused.',
  },
  SPEC_UNKNOWN_MACHINE_INPUT: { severity: 'error', summary: "A machine invoke's input names a field the child's context does not have." },
  SPEC_MISSING_MACHINE_INPUT: {
    severity: 'error',
    summary: 'A required context field of the invoked machine (no default, not optional) has no input mapping.',
  },
  SPEC_UNKNOWN_OUTPUT_FIELD: {
    severity: 'error',
    summary: "A final state's `output` names a field the machine's `output` does not declare.",
  },
  SPEC_MISSING_OUTPUT: {
    severity: 'error',
    summary: "A top-level final state lacks a required field of the machine's declared `output`.",
  },
  SPEC_BUDGET_EXCEEDED: {
    severity: 'error',
    summary:
      'A turn (or, with `budget.per: "session"`, a path to a final state) can cost more than the spec\'s `budget` allows; the pointer names the call that crosses it.',
  },
  COST_UNBOUNDED: {
    severity: 'warning',
    summary:
      'A loop the session takes by itself (always, after, a call result) that makes calls has no counter guard the checker can read, or machine invocations form a cycle: its cost has no bound.',
  },
  COST_UNKNOWN_MACHINE: { severity: 'warning', summary: 'An invoke starts a machine whose spec is not known, so its cost is not either.' },
  SPEC_LAYOUT_UNKNOWN_STATE: { severity: 'warning', summary: 'A layout entry names a state that does not exist.' },
  SPEC_CHANNEL_NAME: {
    severity: 'error',
    summary: 'A channel name or listen pattern is not dot-separated snake_case words (a prefix ends in .*).',
  },
  SPEC_CHANNEL_KEY: {
    severity: 'error',
    summary: "channels.key does not name a string context field (the field holding a receiving session's key).",
  },
  SPEC_CHANNEL_NO_EVENTS: {
    severity: 'error',
    summary: 'A listen pattern receives no declared event (a message on a.b arrives as event A_B).',
  },
  SPEC_CHANNEL_OVERLAP: {
    severity: 'error',
    summary: 'Two machines listen to patterns some channel matches both of; routing would be a guess.',
  },
  SPEC_CHANNEL_UNROUTED: { severity: 'error', summary: 'A machine emits on a channel no machine of the project listens to.' },
  SPEC_CHANNEL_UNKNOWN_MESSAGE: { severity: 'error', summary: "A message's receiving machine does not declare the event it arrives as." },
  SPEC_CHANNEL_PAYLOAD: { severity: 'error', summary: "A message's data has a field the receiving event lacks, or lacks one it needs." },
} as const satisfies Record<string, { severity: 'error' | 'warning'; summary: string }>;

export type SpecProblemCode = keyof typeof SPEC_PROBLEM_CODES;
export type Severity = 'error' | 'warning';

/** One finding about a spec; `path` is a JSON pointer into the spec document. */
export interface SpecProblem {
  code: SpecProblemCode;
  severity: Severity;
  path: string;
  message: string;
}

export function problem(code: SpecProblemCode, path: string, message: string): SpecProblem {
  return { code, severity: SPEC_PROBLEM_CODES[code].severity, path, message };
}

/** Builds a JSON pointer from path segments (RFC 6901 escaping). */
export function pointer(...segments: Array<string | number>): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

export function hasErrors(problems: readonly SpecProblem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}
