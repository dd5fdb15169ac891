import type { LlmRequest } from '../llm/types.ts';
import { argsHash } from '../session/approvals.ts';

/**
 * The hash a model call is logged with (`llm.started.inputHash`) and matched by in a replay: sha256 of the request's
 * stable JSON without what the runtime adjusts on the way to the provider (an agent's iteration cap, a repair note).
 */
export function requestHash(request: LlmRequest): string {
  const { repair: _repair, ...rest } = request as LlmRequest & { maxIterations?: number };
  if ('maxIterations' in rest) delete (rest as { maxIterations?: number }).maxIterations;
  return argsHash(rest);
}
