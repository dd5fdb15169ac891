/** Codes `flowing inspect` refuses a file with before starting the studio (the studio checks the rest of the file). */
export const INSPECT_CLI_ERROR_CODES = {
  INSPECT_FILE_NOT_FOUND: 'There is no readable file at the path given.',
  INSPECT_FILE_WRONG_KIND: 'The first line is not a Flowing session header (export a session from the studio or GET /sessions/:id/export).',
  INSPECT_FILE_VERSION: 'The file was written in a format version this flowing does not read.',
} as const;

export type InspectCliErrorCode = keyof typeof INSPECT_CLI_ERROR_CODES;

/** What the header line of a session file names. */
export interface SessionFileSummary {
  machineId: string;
  sessionId: string;
  specHash: string;
  events: number | undefined;
}

/** A refused session file: `code` is one of INSPECT_CLI_ERROR_CODES. */
export class InspectFileError extends Error {
  constructor(
    readonly code: InspectCliErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'InspectFileError';
  }
}

/**
 * Reads the header (line 1) of a session export: kind `flowing.session`, format version 1, the machine and session.
 * Throws InspectFileError with INSPECT_FILE_WRONG_KIND or INSPECT_FILE_VERSION.
 * @example readSessionHeader(text).machineId // 'order-support'
 */
export function readSessionHeader(text: string): SessionFileSummary {
  const end = text.indexOf('\n');
  const first = (end < 0 ? text : text.slice(0, end)).trim();
  let header: unknown;
  try {
    header = JSON.parse(first);
  } catch {
    throw new InspectFileError('INSPECT_FILE_WRONG_KIND', 'line 1 is not JSON; this is not a Flowing session file');
  }
  const h = (header ?? {}) as Record<string, unknown>;
  if (h.kind !== 'flowing.session') {
    throw new InspectFileError(
      'INSPECT_FILE_WRONG_KIND',
      `line 1 has kind ${JSON.stringify(typeof h.kind === 'string' ? h.kind.slice(0, 60) : (h.kind ?? null))}, not "flowing.session"`,
    );
  }
  if (h.formatVersion !== 1)
    throw new InspectFileError('INSPECT_FILE_VERSION', `line 1 has formatVersion ${JSON.stringify(h.formatVersion)}; this flowing reads 1`);
  for (const field of ['machineId', 'sessionId', 'specHash'] as const) {
    if (typeof h[field] !== 'string' || h[field] === '') throw new InspectFileError('INSPECT_FILE_WRONG_KIND', `line 1 has no ${field}`);
  }
  return {
    machineId: h.machineId as string,
    sessionId: h.sessionId as string,
    specHash: h.specHash as string,
    events: typeof h.events === 'number' ? h.events : undefined,
  };
}
