/** Defaults of the runtime's limits; every one can be overridden in `createRuntime({ limits })`. */
export const DEFAULT_STEPS_PER_TURN = 1_000;
/** 256 MiB of events and journal writes per session (an order-support turn logs about 9.5 KB: 28,000 turns). */
export const DEFAULT_MAX_LOG_BYTES = 256 * 1024 * 1024;
/** How deep child sessions (machine invokes) may nest: a root session's child is at depth 1. */
export const DEFAULT_MACHINE_DEPTH = 8;
export const DEFAULT_MAX_CONCURRENT_CALLS = 64;
export const DEFAULT_MAX_AGENT_ITERATIONS = 10;
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 8_000;
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;
export const DEFAULT_RETRY_BASE_MS = 200;
export const DEFAULT_RETRY_MAX_MS = 10_000;
export { MAX_LLM_REPAIRS } from '@flowing/spec';
/** Quiet sessions a runtime keeps as live actors so a quick follow-up event skips the restore. */
export const DEFAULT_WARM_SESSIONS = 8;
/**
 * Event ids (`send(event, { eventId })`, HTTP `Idempotency-Key`) a session remembers: the last this many. A repeat of
 * an id older than that is applied again; ids are kept in the session record, so the window costs each commit bytes.
 */
export const EVENT_IDS_KEPT = 64;
/** Longest event id accepted (printable ASCII). */
export const MAX_EVENT_ID_LENGTH = 128;
/**
 * Longest reason for an APPROVE / REJECT kept with the decision, logged and shown to the model (as the HTTP routes
 * accept it); a longer one is cut.
 */
export const MAX_DECISION_REASON_CHARS = 2_000;
