/**
 * Codes of `@flowing/runtime/testing` and `flowing test`: path tests, case files and replays. A code names what went
 * wrong; messages may change, codes do not.
 */
export const TESTING_ERROR_CODES = {
  CASE_UNREADABLE: 'The case file cannot be read.',
  CASE_BAD_LINE: 'A line of the case file is not JSON of a known record type (the message names file and line).',
  CASE_NO_HEADER: 'The case file does not start with a `case` header line (machineId, specHash, formatVersion).',
  CASE_WRONG_MACHINE: 'The case was recorded on another machine than the one it is replayed against.',
  CASE_FORMAT_VERSION: 'The case file has a format version this version of Flowing does not read.',
  CASE_NO_EXPECTATION: 'The case file has no `expect` line.',
  CASE_NOT_RECORDABLE:
    'The session log cannot be turned into a case (it does not start with session.started, or belongs to another machine).',
  CASE_NEEDS_RECORDING: '`--update` refused: the new machine makes a call the recording lacks; record the case again.',
  REPLAY_MISSING_CALL: 'The replayed machine made a tool or model call the recording has no result for; it was not made.',
  REPLAY_UNUSED_CALL: 'The recording has a call result the replayed machine never asked for (listed in the diff).',
  REPLAY_DIVERGED: 'The replayed session behaved differently from the recording (states, calls, replies, status or context).',
  REPLAY_STUCK: 'The replayed session neither settled nor had a timer left to fire.',
  PATH_DIVERGED: 'A generated path, run headless, visited other states than the graph predicted.',
  PATH_NO_EXAMPLE:
    "A path needs a result of a tool that declares no examples; a placeholder was used and the tool's output contract may refuse it.",
  PATH_LIMIT: 'Path generation stopped at its limit of explored snapshots; coverage may be partial.',
  STATIC_UNREACHABLE_STATE: 'No transition leads to this state.',
  STATIC_DEAD_END: 'A non-final state has no way out.',
  STATIC_UNUSED_EVENT: 'A declared event is accepted by no state.',
  STATIC_CONSTANT_GUARD:
    'A guard reads nothing that can change (no context, event, output or error), so it is always true or always false.',
  TEST_NO_MACHINES: '`flowing test`: no generated machine was found.',
  LIVE_NOT_CONFIGURED: '`flowing test --live`: OPENAI_BASE_URL is not set.',
} as const;

export type TestingErrorCode = keyof typeof TESTING_ERROR_CODES;
