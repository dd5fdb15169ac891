import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, RateLimitError } from 'openai';
import { FlowingError } from '../../errors.ts';

/**
 * Maps anything the OpenAI SDK throws to a coded FlowingError, keeping the SDK error as `cause`:
 * 429 -> LLM_RATE_LIMITED, a connection timeout -> LLM_TIMEOUT, a user abort -> CANCELLED, every other status,
 * connection failure or unreadable stream -> LLM_FAILED.
 * @internal
 */
export function mapOpenAIError(error: unknown, model: string): FlowingError {
  if (error instanceof FlowingError) return error;
  if (error instanceof APIUserAbortError) {
    return new FlowingError('CANCELLED', `the request to model '${model}' was aborted`, { cause: error });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new FlowingError('LLM_TIMEOUT', `model '${model}' did not answer before the SDK timeout`, { cause: error });
  }
  if (error instanceof RateLimitError || (error instanceof APIError && error.status === 429)) {
    const retryAfter = retryAfterOf(error);
    return new FlowingError(
      'LLM_RATE_LIMITED',
      `model '${model}' was rate-limited by the provider (HTTP 429): ${error.message}; retry later or lower the request rate`,
      {
        cause: error,
        details: { status: 429, ...(retryAfter ? { retryAfter } : {}) },
      },
    );
  }
  if (error instanceof APIConnectionError) {
    return new FlowingError('LLM_FAILED', `could not reach the model provider for '${model}': ${error.message}; check OPENAI_BASE_URL`, {
      cause: error,
      details: { transient: true },
    });
  }
  if (error instanceof APIError) {
    const status = error.status;
    const where = status === undefined ? 'in the stream' : `(HTTP ${status})`;
    return new FlowingError('LLM_FAILED', `the model provider returned an error for '${model}' ${where}: ${error.message}`, {
      cause: error,
      details: {
        ...(status === undefined ? {} : { status }),
        ...(error.code ? { providerCode: error.code } : {}),
        ...(retryAfterOf(error) ? { retryAfter: retryAfterOf(error) } : {}),
      },
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new FlowingError('LLM_FAILED', `the call to model '${model}' failed: ${message}`, {
    cause: error,
    ...(isConnectionCut(error) ? { details: { transient: true } } : {}),
  });
}

/** The wait the provider asks for: `retry-after-ms` (as `<n>ms`) over `retry-after` (seconds or an HTTP date). */
function retryAfterOf(error: APIError): string | undefined {
  const ms = error.headers?.get('retry-after-ms');
  if (ms && /^\d+$/.test(ms.trim())) return `${ms.trim()}ms`;
  return error.headers?.get('retry-after') ?? undefined;
}

/** A connection dropped under a response being read (fetch's `terminated`, a reset socket): worth another request. */
function isConnectionCut(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code ?? (error as { code?: unknown }).code;
  return (error instanceof TypeError && error.message === 'terminated') || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET';
}
