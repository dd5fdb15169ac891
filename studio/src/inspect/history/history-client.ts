import { RuntimeApiError, runtimeHeaders, runtimeUrl, type RuntimeEndpoint } from '../runtime-client.ts';
import type { SessionView } from '../wire.ts';

/** The answer of a fork: the new session's view and its link to the parent. */
export interface ForkedSession extends SessionView {
  parentId: string;
  forkedAt: number;
}

/** Body of `POST /sessions/:id/fork`: the seq to fork at and the context fields to pin (each replaces the field). */
export interface ForkBody {
  atSeq: number;
  context?: Record<string, unknown>;
}

const sessionPath = (id: string) => `/sessions/${encodeURIComponent(id)}`;

async function failure(response: Response): Promise<RuntimeApiError> {
  const text = await response.text().catch(() => '');
  try {
    const { code = 'RUNTIME_ERROR', message = `HTTP ${response.status}`, ...details } = JSON.parse(text) as Record<string, unknown>;
    return new RuntimeApiError(response.status, String(code), String(message), details);
  } catch {
    return new RuntimeApiError(response.status, 'RUNTIME_BAD_RESPONSE', `the runtime answered ${response.status} with a body that is not JSON`);
  }
}

async function send(endpoint: RuntimeEndpoint, path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(runtimeUrl(endpoint, path), init);
  } catch (err) {
    throw new RuntimeApiError(0, 'RUNTIME_UNREACHABLE', `the runtime at ${endpoint.baseUrl} did not answer (${(err as Error).message})`);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

/** The file name in a `Content-Disposition: attachment; filename="..."` header, if it has a plain one. */
function fileNameOf(disposition: string | null): string | undefined {
  const match = /filename="([A-Za-z0-9_.-]{1,200})"/.exec(disposition ?? '');
  return match?.[1];
}

/**
 * `GET /sessions/:id/export`: the session as one JSON-lines file (header, events, journal) and the name to save it as.
 * @example const { text, fileName } = await exportSession({ baseUrl: '/api/runtime' }, id)
 */
export async function exportSession(endpoint: RuntimeEndpoint, sessionId: string): Promise<{ text: string; fileName: string }> {
  const response = await send(endpoint, `${sessionPath(sessionId)}/export`, { headers: runtimeHeaders(endpoint, { accept: 'application/x-ndjson' }) });
  return { text: await response.text(), fileName: fileNameOf(response.headers.get('content-disposition')) ?? `${sessionId}.flowing.jsonl` };
}

/**
 * `GET /sessions/:id/case?name=&context=`: the session as a case file (JSON lines) for `flowing test`. `context` lists
 * the final context keys the case compares (none: all of them).
 * @example const text = await fetchSessionCase({ baseUrl: '/api/runtime' }, id, { name: 'refund-ok', context: ['reply'] })
 */
export async function fetchSessionCase(endpoint: RuntimeEndpoint, sessionId: string, options: { name: string; context?: readonly string[] }): Promise<string> {
  const params = new URLSearchParams({ name: options.name });
  if (options.context && options.context.length > 0) params.set('context', options.context.join(','));
  const response = await send(endpoint, `${sessionPath(sessionId)}/case?${params}`, { headers: runtimeHeaders(endpoint, { accept: 'application/x-ndjson' }) });
  return response.text();
}

/**
 * `POST /sessions/:id/fork`: a new session at the state and context the parent had right after `atSeq`, with the
 * pinned context fields replaced. Nothing of the parent is re-run.
 */
export async function forkSession(endpoint: RuntimeEndpoint, sessionId: string, body: ForkBody): Promise<ForkedSession> {
  const response = await send(endpoint, `${sessionPath(sessionId)}/fork`, {
    method: 'POST',
    headers: runtimeHeaders(endpoint, { 'content-type': 'application/json' }),
    body: JSON.stringify(body),
  });
  return (await response.json()) as ForkedSession;
}
