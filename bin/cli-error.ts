/** Codes of the CLI's own failures (the packages have their own tables). */
export const CLI_ERROR_CODES = ['INIT_NOT_A_DIRECTORY', 'INIT_BAD_PACKAGE_JSON', 'INIT_BAD_TSCONFIG'] as const;
export type CliErrorCode = (typeof CLI_ERROR_CODES)[number];

/** A failure of a CLI command that names what to fix; printed as `CODE message`. */
export class CliError extends Error {
  constructor(
    readonly code: CliErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
