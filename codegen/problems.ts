import type { Severity, SpecProblem } from '@flowing/spec';

/** Codes codegen adds to the spec validator's (see spec/problems.ts for those). */
export const CODEGEN_PROBLEM_CODES = {
  CODEGEN_TYPE_ERROR: 'The generated code does not type-check; the path names the spec element that produced the failing code.',
  CODEGEN_DRIFT: 'A generated file differs from what the spec generates now (run `flowing codegen`).',
  CODEGEN_MISSING_FILE: 'A generated file is missing (run `flowing codegen`).',
  CODEGEN_READ_FAILED: 'A spec file could not be read.',
  CODEGEN_FILE_NAME: 'The spec file is not at <id>/<id>.flow.json for the id it declares.',
  CODEGEN_TOOL_LOAD_FAILED: 'A module in tools/ could not be imported (a warning: its tools are treated as missing).',
} as const;

export type CodegenProblemCode = keyof typeof CODEGEN_PROBLEM_CODES;

/** A spec problem or a codegen problem; `path` is a JSON pointer into the spec, `file` the spec file. */
export interface Problem extends Omit<SpecProblem, 'code'> {
  code: SpecProblem['code'] | CodegenProblemCode;
  severity: Severity;
  /** The generated file a type error or drift was found in (relative to the project root). */
  generatedFile?: string;
}
