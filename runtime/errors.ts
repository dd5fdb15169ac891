/**
 * The runtime's errors: the shape, the class and the code table live in `@flowing/protocol` (the studio and any
 * client read the same ones); this module is where the runtime's own files import them from.
 */
export { FlowingError, toFlowError, RUNTIME_ERROR_CODES, type FlowError, type RuntimeErrorCode } from '@flowing/protocol';

/** One line per zod issue, `path: message`, for error messages. */
export function formatIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ');
}
