/**
 * Stable runtime error codes. A code names what went wrong; messages may change, codes do not.
 * Tools may add their own codes (declared in their `errors`).
 */
export const RUNTIME_ERROR_CODES = {
  UNKNOWN_EVENT: 'The event type is not declared by the machine.',
  INVALID_PAYLOAD: 'The event payload does not match its declared schema.',
  NO_TRANSITION: 'No active state handles this event.',
  GUARD_REJECTED:
    "The event is handled, but every guard was false (for a call's result or error, or a timer, the session then needs attention).",
  GUARD_THREW: 'A guard threw instead of answering true or false (the message carries what it threw).',
  ACTION_THREW: 'An action or an assignment threw (the message carries what it threw).',
  MACHINE_THREW: 'The machine threw outside a guard or action (initial context, an invoke input mapping).',
  SESSION_FINISHED: 'The session has reached a final state.',
  SESSION_CANCELLED: 'The session was cancelled.',
  SESSION_NOT_FOUND: 'No session with this id exists in the store.',
  SESSION_NEEDS_ATTENTION: 'The session waits for a person (a call with an unknown outcome, or a result no branch takes).',
  BUSY: 'Another event of this session is being applied and the caller asked not to queue.',
  IDEMPOTENCY_KEY_REUSED:
    'The event id (Idempotency-Key) was sent before with another event; it is not applied (use a new id for a new event).',
  INVALID_EVENT_ID: 'The event id (Idempotency-Key) is not 1-128 printable ASCII characters.',
  RUNTIME_SATURATED:
    "As many runs as limits.maxConcurrentCalls are in progress and limits.overflow is 'refuse'; retry after details.retryAfterSeconds.",
  STEP_LIMIT:
    'The session took more steps than limits.stepsPerTurn since the last event from outside: the event is refused and the session is back in the state it had before it.',
  SESSION_LOG_FULL:
    "The session's log reached limits.maxLogBytes: the event is refused and nothing of it is written (the message names the session, the quota and the size).",
  RUNTIME_BAD_OPTIONS: 'An option of createRuntime is invalid (the message names it).',
  BUDGET_EXCEEDED: 'The session exceeded its token budget.',
  UNKNOWN_MACHINE: 'No machine with this id was given to the runtime.',
  MACHINE_CALL_OUTSIDE_RUNTIME: 'A machine invoke ran under bare XState; only a Flowing runtime starts child sessions.',
  MACHINE_DEPTH_EXCEEDED: 'A machine invoke would nest child sessions deeper than limits.machineDepth (default 8).',
  APPROVAL_ALREADY_DECIDED:
    'An APPROVE or REJECT reached a parent session after the child session it was for had its approval decided (details name the child).',
  CHILD_FAILED: 'The child session a machine invoke started ended in error or was cancelled (details name the child).',
  MACHINE_INVALID: 'A machine definition handed to the runtime is inconsistent (an expression in its spec does not parse).',
  SPEC_CHANGED:
    'The stored session was recorded under another version of the machine and does not fit the served one (details.reasons name why; a migration hook can carry it over).',
  STALE_STATE_REMOVED: 'A state the session is in is not in the served version of the machine.',
  STALE_STATE_CHANGED: 'A state the session is in has child states in the served version; the session does not know which to enter.',
  STALE_CONTEXT_INVALID:
    "The session's context does not validate against the served version's context schema (a field changed type or is required now).",
  STALE_CALL_IN_FLIGHT: 'A call is in flight in a state whose invoke changed in the served version.',
  STALE_TIMER_CHANGED: 'A pending `after` timer of the session is not declared in the served version (its delay or state changed).',
  MIGRATION_HOOK_INVALID: "A machine's `migrate` export (its .impl.ts) is not a migration hook (the message names the field).",
  MIGRATION_HOOK_THREW: "The machine's migration hook threw while mapping the session's context.",
  CONTEXT_INVALID: 'A transition produced a context that does not match the declared context schema.',
  STORE_CONFLICT: 'The stored session changed since it was read (optimistic version check).',
  SESSION_LEASED:
    "Another process is stepping the session (it holds the session's lease) and did not finish within the lease wait; retry after `details.retryAfterMs`.",
  LEASE_LOST:
    "This process lost the session's lease mid-step (not renewed in time); it stopped and wrote nothing more, and another process takes the session over.",
  SUBSCRIPTION_FAILED: 'A subscription could not read the stored events it must deliver; it is closed (subscribe again from the last seq).',
  TOOL_TIMEOUT: 'The tool did not finish within its timeout.',
  TOOL_FAILED: 'The tool failed without a declared error code.',
  TOOL_CONTRACT: 'The tool input or output does not match its zod contract.',
  TOOL_UNKNOWN: 'The tool is not registered.',
  TOOL_EXAMPLE_INVALID: "A tool's declared example does not match its input/output schema or names an undeclared error code.",
  TOOL_UNKNOWN_OUTCOME: 'A non-idempotent tool call started but its result was never recorded.',
  APPROVAL_REQUIRED: 'A high-risk tool was invoked without an approval.',
  APPROVAL_REJECTED: 'A person rejected the call.',
  LLM_BAD_OUTPUT: 'The model output could not be parsed or validated, also after repair attempts.',
  LLM_TIMEOUT: 'The model did not answer within its timeout.',
  LLM_RATE_LIMITED: 'The model provider rate-limited the request.',
  LLM_FAILED: 'The model provider returned an error.',
  LLM_NOT_CONFIGURED: 'No model provider is configured for this call.',
  LLM_PROMPT_TOO_LARGE:
    "A model call's prompt does not fit its token limit (memory.maxPromptTokens, else maxTokens) even with only the conversation's last turn.",
  CANCELLED: 'The call was aborted because the session was cancelled.',
  HANDOFF_UNKNOWN:
    "An agent's model called a `transfer_to_<name>` tool for a target the call does not declare in `handoffs` (answered to the model as an error and logged in agent.step).",
  BAD_ARGUMENTS: 'A model asked for a tool call with arguments that are not a JSON object (told to the model, not thrown).',
  RUN_EVENTS_UNREADABLE: '`flowing run --events`: the events file cannot be read.',
  RUN_EVENTS_BAD_LINE: '`flowing run --events`: a line is not a JSON object with a string "type" (the message names the line).',
  RUN_FAILED: '`flowing run`: the session could not be started or driven.',
  RUN_EVENTS_REFUSED: '`flowing run`: at least one event was refused (each refusal is logged as transition.rejected); exit status 1.',
  RUN_BAD_STORE:
    '`flowing run --store`: not a store (sqlite:PATH, redis://HOST:PORT or memory), its driver is missing, or --session without a durable store.',
  RUN_BAD_SESSION: '`flowing run --session`: the stored session runs another machine.',
  RUN_BAD_INPUT: '`flowing run --input`: not a JSON object of context fields.',
  RUN_BAD_CASE_NAME:
    '`flowing run --record`: the case name is not 1-64 characters of a-z 0-9 _ - (it names machines/<id>/cases/<name>.case.jsonl).',
  RUN_OUTPUT_FAILED: '`flowing run`: the output stream failed (a closed pipe, EPIPE, simply ends the output).',
  CHANNEL_UNROUTED: 'A channel message was emitted on a channel no machine of the runtime listens to (logged as channel.failed).',
  MCP_CONFIG_INVALID: 'An MCP server entry is malformed, or names an environment variable that is not set (the message names it).',
  MCP_UNAVAILABLE: 'An MCP server could not be started or reached.',
  MCP_SERVER_CLOSED: 'An MCP server went away while a call was running (the next call connects again).',
  MCP_CALL_FAILED: 'An MCP server refused a request (a protocol error, an unknown tool).',
  MCP_TOOL_ERROR: 'An MCP tool answered with an error result (the message carries its text).',
  MCP_SCHEMA_DRIFT:
    "`flowing codegen --check`: an MCP server's tools differ from the snapshot in mcp/ (run `flowing mcp pull`, then `flowing codegen`).",
  NONDETERMINISM: 'Replaying a recorded session produced a different event than the recording.',
} as const;

export type RuntimeErrorCode = keyof typeof RUNTIME_ERROR_CODES;
