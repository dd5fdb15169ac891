import type { ForkRequest, ForkView } from '@flowing/protocol';
import { callRoute, fetchRouteText, type RuntimeEndpoint } from '../runtime-client.ts';

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
  const { response, text } = await fetchRouteText(endpoint, 'GET /sessions/:id/export', { params: { id: sessionId } });
  return { text, fileName: fileNameOf(response.headers.get('content-disposition')) ?? `${sessionId}.flowing.jsonl` };
}

/**
 * `GET /sessions/:id/case?name=&context=`: the session as a case file (JSON lines) for `flowing test`. `context` lists
 * the final context keys the case compares (none: all of them).
 * @example const text = await fetchSessionCase({ baseUrl: '/api/runtime' }, id, { name: 'refund-ok', context: ['reply'] })
 */
export async function fetchSessionCase(
  endpoint: RuntimeEndpoint,
  sessionId: string,
  options: { name: string; context?: readonly string[] },
): Promise<string> {
  const query = { name: options.name, ...(options.context && options.context.length > 0 ? { context: options.context } : {}) };
  return (await fetchRouteText(endpoint, 'GET /sessions/:id/case', { params: { id: sessionId }, query })).text;
}

/**
 * `POST /sessions/:id/fork`: a new session at the state and context the parent had right after `atSeq`, with the
 * pinned context fields replaced. Nothing of the parent is re-run.
 */
export function forkSession(endpoint: RuntimeEndpoint, sessionId: string, body: ForkRequest): Promise<ForkView> {
  return callRoute(endpoint, 'POST /sessions/:id/fork', { params: { id: sessionId }, body });
}
