import { RuntimeApiError, runtimeHeaders, runtimeUrl, type RuntimeEndpoint } from '../runtime-client.ts';

/** A coded failure body (`{ code, message, ...details }`), or a stand-in code when the body is not JSON. */
async function codedBody(response: Response, fallback: string): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const text = await response.text().catch(() => '');
  try {
    const { code = fallback, message = `HTTP ${response.status}`, ...details } = JSON.parse(text) as Record<string, unknown>;
    return { code: String(code), message: String(message), details };
  } catch {
    return { code: fallback, message: `answered ${response.status} with a body that is not JSON`, details: {} };
  }
}

/**
 * `GET /sessions/:id/case?name=&context=` of the runtime the Inspect mode reads (the studio's mount or a remote
 * `flowing serve` with its token): the session as a case file (JSON lines). `context` lists the final context keys
 * the case compares (none: all of them).
 * @example const text = await fetchSessionCase({ baseUrl: '/api/runtime' }, id, { name: 'refund-ok', context: ['reply'] })
 */
export async function fetchSessionCase(endpoint: RuntimeEndpoint, sessionId: string, options: { name: string; context?: readonly string[] }): Promise<string> {
  const params = new URLSearchParams({ name: options.name });
  if (options.context && options.context.length > 0) params.set('context', options.context.join(','));
  let response: Response;
  try {
    response = await fetch(runtimeUrl(endpoint, `/sessions/${encodeURIComponent(sessionId)}/case?${params}`), {
      headers: runtimeHeaders(endpoint, { accept: 'application/x-ndjson' }),
    });
  } catch (err) {
    throw new RuntimeApiError(0, 'RUNTIME_UNREACHABLE', `the runtime at ${endpoint.baseUrl} did not answer (${(err as Error).message})`);
  }
  if (!response.ok) {
    const { code, message, details } = await codedBody(response, 'RUNTIME_BAD_RESPONSE');
    throw new RuntimeApiError(response.status, code, message, details);
  }
  return response.text();
}
