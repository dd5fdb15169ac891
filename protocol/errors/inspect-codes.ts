/**
 * Stable codes of inspection: replay from a recording, fork, the state at an event, session files. Thrown as
 * `FlowingError`s; the runtime server maps each to its HTTP status.
 */
export const INSPECT_ERROR_CODES = {
  REPLAY_MISSING_CALL: 'A replay asked for a tool or model call the recording does not hold (no real call is made instead).',
  REPLAY_VERSION_MISMATCH: 'The log was recorded under another version of the machine than the one it is replayed on.',
  REPLAY_FORK_NEEDS_PARENT: "A forked session is replayed from where it was forked: its parent's log is needed (parentLog).",
  INSPECT_SEQ_OUT_OF_RANGE: 'The seq asked for is not an event of the session (0 to its last seq).',
  FORK_NO_STATE: 'There is no machine state yet at the seq asked for (fork at or after the first state.changed).',
  FORK_MID_CALL: 'A call was in flight at the seq asked for; fork where the call starts or after it finished (details name both).',
  FORK_ENDED: 'The session had ended (done, error, cancelled) at the seq asked for; a fork needs a state that still runs.',
  FORK_TIMED_STATE:
    'The state at the seq asked for waits on a named or computed delay, which a fork cannot start again (numeric `after` delays start anew in the fork).',
  FORK_CONTEXT_INVALID: "The context patch does not match the machine's context schema (details name the field).",
  SESSION_FILE_INVALID: 'A session file is not a Flowing session export (details name the line and the reason).',
} as const;

export type InspectErrorCode = keyof typeof INSPECT_ERROR_CODES;
