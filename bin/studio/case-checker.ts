import type { CaseChecker } from '@flowing/studio/server';

/**
 * The check "Save as case" runs before the studio writes a case: the runtime's own case parser, as `flowing test`
 * reads the file (CASE_* codes). Loaded on the first save: the testing entry pulls in xstate and @xstate/graph.
 */
export const checkCase: CaseChecker = async (text, machineId, shownPath) => {
  const { parseCase, checkCaseMachine } = await import('@flowing/runtime/testing');
  checkCaseMachine(parseCase(text, shownPath), machineId);
};
