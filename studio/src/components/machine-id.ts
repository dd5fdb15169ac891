import { generatedIdentifier, isReservedWord, MACHINE_ID_PATTERN, RESERVED_NAMES } from '@flowing/spec';

/** Longest machine id the validator accepts. */
const MAX_MACHINE_ID_LENGTH = 64;

/** Why a new machine id cannot be used, with the code the CLI's validator (or the studio server) gives it. */
export interface MachineIdProblem { code: string; message: string }

/**
 * Checks a new machine id as `flowing validate` and the studio server do: kebab-case, at most 64 characters, not a
 * reserved name, and not the id of a machine that exists. Returns undefined when the id can be created.
 */
export function machineIdProblem(id: string, existing: readonly string[]): MachineIdProblem | undefined {
  if (id.length > MAX_MACHINE_ID_LENGTH) return { code: 'SPEC_INVALID_ID', message: `At most ${MAX_MACHINE_ID_LENGTH} characters.` };
  if (!MACHINE_ID_PATTERN.test(id)) {
    return { code: 'SPEC_INVALID_ID', message: 'Use kebab-case: a lower-case letter first, then a-z, 0-9 and single dashes (e.g. order-support).' };
  }
  if (RESERVED_NAMES.has(id) || isReservedWord(generatedIdentifier(id))) {
    return { code: 'SPEC_RESERVED_NAME', message: `"${id}" is reserved in JavaScript; choose another, e.g. ${id}-flow.` };
  }
  if (existing.includes(id)) return { code: 'STUDIO_MACHINE_EXISTS', message: `A machine "${id}" already exists; open it instead.` };
  return undefined;
}
