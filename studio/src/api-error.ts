import { FlowingError, isFlowError, type FlowError, type KnownErrorCode } from '@flowing/protocol';

/** Which server a request went to: the studio's own API, or a runtime (the embedded one or a `flowing serve`). */
export type ApiServer = 'studio' | 'runtime';

/** Codes the app gives a failure no server answered with a code. */
export const CLIENT_ERROR_CODES = {
  STUDIO_UNREACHABLE: 'The studio server did not answer; is it still running?',
  STUDIO_BAD_RESPONSE: 'The studio server answered a failure that is not the error shape (not JSON, or no code).',
  RUNTIME_UNREACHABLE: 'The runtime did not answer; check its URL and that it runs.',
  RUNTIME_CORS_REFUSED:
    "The runtime answered, but not to this page's origin (the browser hid the answer): start it with flowing serve --cors <studio origin>.",
  RUNTIME_BAD_RESPONSE: 'The runtime answered a failure that is not the error shape (not JSON, or no code).',
} as const;

export type ClientErrorCode = keyof typeof CLIENT_ERROR_CODES;

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A failed request: the server's `FlowError` answer with the HTTP status (0 when there was no answer). `details` is
 * always a record (a non-object `details` is kept under `value`).
 */
export class ApiError extends FlowingError {
  declare readonly details: Readonly<Record<string, unknown>>;
  constructor(
    readonly server: ApiServer,
    readonly status: number,
    error: FlowError,
  ) {
    super(error.code, error.message, {
      details: isRecord(error.details) ? error.details : error.details === undefined ? {} : { value: error.details },
    });
    this.name = 'ApiError';
  }
}

/**
 * The one reader of error answers, of both servers: the body must be the FlowError shape (`{ code, message,
 * details? }`, extra keys such as `applied: false` allowed); anything else is `<SERVER>_BAD_RESPONSE`.
 */
export function errorFromAnswer(server: ApiServer, status: number, text: string): ApiError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isFlowError(body)) return new ApiError(server, status, body);
  const code: ClientErrorCode = server === 'studio' ? 'STUDIO_BAD_RESPONSE' : 'RUNTIME_BAD_RESPONSE';
  return new ApiError(server, status, {
    code,
    message: `the ${server === 'studio' ? 'studio server' : 'runtime'} answered ${status} without a coded error (${text.slice(0, 80) || 'an empty body'})`,
  });
}

/** The failure of a request that got no answer at all. */
export function unreachable(server: ApiServer, where: string, error: unknown): ApiError {
  const code: ClientErrorCode = server === 'studio' ? 'STUDIO_UNREACHABLE' : 'RUNTIME_UNREACHABLE';
  return new ApiError(server, 0, { code, message: `${where} did not answer (${(error as Error)?.message ?? String(error)})` });
}

/**
 * Why a request to another origin got no readable answer: when the same URL answers a no-cors request (an opaque
 * response), the server is up and the browser withheld its answer for want of CORS headers for this page's origin;
 * otherwise the server did not answer at all.
 */
async function blockedByCors(url: string): Promise<boolean> {
  const target = new URL(url, window.location.href);
  if (target.origin === window.location.origin) return false;
  try {
    await fetch(target, { mode: 'no-cors', cache: 'no-store' });
    return true;
  } catch {
    return false;
  }
}

/** The failure of a runtime on another origin that answers, but not to this page: it names the `--cors` fix. */
export function corsRefused(where: string, url: string): ApiError {
  const origin = window.location.origin;
  return new ApiError('runtime', 0, {
    code: 'RUNTIME_CORS_REFUSED',
    message: `${where} answered, but the browser blocked reading it: the server does not allow this studio's origin ${origin}. Start it with flowing serve --cors ${origin}`,
    details: { origin, url },
  });
}

/**
 * `fetch`, answering the response when it is a success, throwing an ApiError otherwise. `acceptRefusal`: a refused
 * send (`{ applied: false, code, message }`, answered with a 4xx) is an answer, not a failure.
 */
export async function request(
  server: ApiServer,
  where: string,
  url: string,
  init: RequestInit,
  options: { acceptRefusal?: boolean } = {},
): Promise<{ response: Response; text: string }> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (server === 'runtime' && (await blockedByCors(url))) throw corsRefused(where, url);
    throw unreachable(server, where, error);
  }
  const text = await response.text();
  if (response.ok) return { response, text };
  if (options.acceptRefusal) {
    try {
      const body = JSON.parse(text) as { applied?: unknown };
      if (body.applied === false && isFlowError(body)) return { response, text };
    } catch {
      // not JSON: reported below
    }
  }
  throw errorFromAnswer(server, response.status, text);
}

/** A successful answer's JSON body; a body that is not JSON is `<SERVER>_BAD_RESPONSE`. */
export function jsonOf<T>(server: ApiServer, status: number, text: string): T {
  try {
    return (text ? JSON.parse(text) : {}) as T;
  } catch {
    throw new ApiError(server, status, {
      code: server === 'studio' ? 'STUDIO_BAD_RESPONSE' : 'RUNTIME_BAD_RESPONSE',
      message: `the answer (${status}) is not JSON`,
    });
  }
}

/** Whether `error` is a failure with this code (a code no table has does not compile). */
export function hasCode(error: unknown, code: KnownErrorCode | ClientErrorCode): error is ApiError {
  return error instanceof ApiError && error.code === code;
}

/** `{ code, message }` of any failure for a notice; a code's `details.problem` (the code of what was refused) wins. */
export function describeError(error: unknown, fallbackCode: string): { code: string; message: string } {
  if (error instanceof ApiError)
    return { code: typeof error.details.problem === 'string' ? error.details.problem : error.code, message: error.message };
  return { code: fallbackCode, message: error instanceof Error ? error.message : String(error) };
}
