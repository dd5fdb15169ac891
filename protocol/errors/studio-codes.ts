/**
 * Stable codes of the studio server's API, with the HTTP status each one is answered with (as `FlowError`, like every
 * error answer). Codes are the contract with the studio front end; messages may improve.
 */
export const STUDIO_ERROR_CODES = {
  STUDIO_FORBIDDEN_HOST: { status: 403, summary: "The Host header is not the studio's own (localhost, 127.0.0.1 or [::1] with its port)." },
  STUDIO_FORBIDDEN_ORIGIN: { status: 403, summary: 'The request comes from another origin (Origin header or Sec-Fetch-Site).' },
  STUDIO_BAD_PATH: {
    status: 400,
    summary: 'The path is not a plain identifier inside machines/ or tools/ (traversal, encoding, symlink out).',
  },
  STUDIO_BAD_NAME: {
    status: 400,
    summary: 'A tool name is not a snake_case identifier, or a case name is not 1-64 characters of a-z, 0-9, _ and -.',
  },
  STUDIO_BAD_MACHINE_ID: {
    status: 400,
    summary: 'A new machine id is not kebab-case, is longer than 64 characters, or is reserved (`details.problem` holds the spec code).',
  },
  STUDIO_BAD_JSON: { status: 400, summary: 'The body is not JSON, or is nested deeper than the limit.' },
  STUDIO_BAD_REQUEST: { status: 400, summary: 'The JSON body does not have the fields this route needs.' },
  STUDIO_CASE_INVALID: {
    status: 400,
    summary:
      "A case to save is not a case file of this machine; `details.problem` is the runtime's CASE_* code (CASE_WRONG_MACHINE, CASE_BAD_LINE, ...).",
  },
  STUDIO_ID_MISMATCH: { status: 400, summary: 'The machine id in the URL differs from `spec.id`.' },
  STUDIO_NOT_FOUND: { status: 404, summary: 'No such route, machine, tool or file of the built app.' },
  STUDIO_METHOD_NOT_ALLOWED: { status: 405, summary: 'The route exists but not with this method.' },
  STUDIO_CONFLICT: {
    status: 409,
    summary: 'The spec file changed on disk since it was loaded (save, delete), or already exists (create by save).',
  },
  STUDIO_EXISTS: { status: 409, summary: 'A tool file with this name already exists; it is never overwritten.' },
  STUDIO_MACHINE_EXISTS: { status: 409, summary: 'A machine with this id already exists; "New machine" never overwrites one.' },
  STUDIO_CASE_EXISTS: {
    status: 409,
    summary: 'A case file with this name already exists; it is replaced only when the save says `replace: true`.',
  },
  STUDIO_BODY_TOO_LARGE: { status: 413, summary: 'The request body is larger than the limit.' },
  STUDIO_SPEC_INVALID: { status: 422, summary: 'The spec has errors (save it as a draft, or fix it before generating).' },
  STUDIO_CASES_UNAVAILABLE: {
    status: 503,
    summary: 'The studio was started without a case checker (the `flowing` CLI passes one), so it cannot save cases.',
  },
  STUDIO_RUNTIME_UNAVAILABLE: {
    status: 503,
    summary:
      'No runtime is mounted under /api/runtime (the studio was started without one), or it could not start (no generated machine, store not openable); the message says which.',
  },
  STUDIO_INTERNAL: { status: 500, summary: 'The studio server failed unexpectedly; the message says where.' },
  STUDIO_APP_MISSING: { status: 500, summary: '`flowing studio` found no built app (dist/app/index.html); run `npm run build`.' },
  STUDIO_PORT_IN_USE: {
    status: 500,
    summary: '`flowing studio` could not listen: the port is taken (choose another with --port or PORT).',
  },
} as const satisfies Record<string, { status: number; summary: string }>;

export type StudioErrorCode = keyof typeof STUDIO_ERROR_CODES;
