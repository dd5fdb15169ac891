/**
 * `@flowing/runtime/testing`: path tests, recorded cases and their replay, usable from vitest (or any runner) and
 * behind `flowing test`. Needs `@xstate/graph` (an optional peer of @flowing/runtime) for path tests.
 */
export { testPaths, type TestPathsOptions, type PathsReport, type PathResult } from './test-paths.ts';
export { testCase, acceptCase, type CaseResult } from './replay-case.ts';
export { planPaths, DEFAULT_MAX_SNAPSHOTS, type MachinePath, type PathPlan } from './paths.ts';
export { staticFindings, type Finding } from './static-checks.ts';
export { coverageOf, machineInventory, startTransitions, type Coverage } from './coverage.ts';
export { caseFromLog, type RecordCaseOptions } from './record.ts';
export {
  CASE_FORMAT_VERSION,
  parseCase,
  serializeCase,
  readCaseFile,
  checkCaseMachine,
  type CaseFile,
  type CaseHeader,
  type CaseInput,
  type TimerInput,
  type CaseStep,
  type CaseExpectation,
  type RecordedCall,
  type CallResult,
} from './case-file.ts';
export { createCaseCalls, type CaseCalls, type MissingCall } from './case-calls.ts';
export { driveSession, type DriveOptions, type DriveResult } from './drive.ts';
export { diffCase, type CaseDiff, type Sides } from './diff.ts';
export { formatCaseDiff } from './format-diff.ts';
export { observeLog, stateLabel, type Observation } from './observe.ts';
export { TESTING_ERROR_CODES, TestingError, type TestingErrorCode } from './errors.ts';
