import type { FlowError } from '../errors.ts';

/**
 * How a run stopped short, if it did (one value; a run without one is doing fine):
 * - `reverted`: the event being applied was undone (a context that breaks the spec, a throw while applying it);
 *   the store keeps what it held before, the event is refused with this error, and the next event starts afresh;
 * - `ended`: the session ended in `error`, or stopped for a person (`needs_attention`); the error is stored with
 *   the session's record;
 * - `lost`: this process may write nothing more for the session (a store conflict, a lost lease); another process
 *   resumes it from the store.
 */
export type RunOutcome = { kind: 'reverted'; error: FlowError } | { kind: 'ended'; error: FlowError } | { kind: 'lost'; error: FlowError };
