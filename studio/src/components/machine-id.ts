import { MACHINE_ID_PATTERN, SPEC_VERSION, validateSpec } from '@flowing/spec';

/** Longest machine id the validator accepts. */
const MAX_MACHINE_ID_LENGTH = 64;

/** Why a new machine id cannot be used, with the code the CLI's validator (or the studio server) gives it. */
export interface MachineIdProblem {
  code: string;
  message: string;
}

/**
 * Checks a new machine id as the studio server does: kebab-case and at most 64 characters, then whatever the CLI's
 * validator says about `/id` (reserved names), then that no machine has it. Undefined when the id can be created.
 */
export function machineIdProblem(id: string, existing: readonly string[]): MachineIdProblem | undefined {
  if (id.length > MAX_MACHINE_ID_LENGTH) return { code: 'SPEC_INVALID_ID', message: `At most ${MAX_MACHINE_ID_LENGTH} characters.` };
  if (!MACHINE_ID_PATTERN.test(id)) {
    return {
      code: 'SPEC_INVALID_ID',
      message: 'Use kebab-case: a lower-case letter first, then a-z, 0-9 and single dashes (e.g. order-support).',
    };
  }
  const spec = { specVersion: SPEC_VERSION, id, events: {}, initial: 'idle', states: { idle: {} } };
  const problem = validateSpec(spec).problems.find((p) => p.severity === 'error' && p.path === '/id');
  if (problem) return { code: problem.code, message: problem.message };
  if (existing.includes(id)) return { code: 'STUDIO_MACHINE_EXISTS', message: `A machine "${id}" already exists; open it instead.` };
  return undefined;
}
