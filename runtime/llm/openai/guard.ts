import type { Clock } from '../../clock.ts';
import { Deadline } from '../../deadline.ts';
import { FlowingError } from '../../errors.ts';

/**
 * One model request's stop conditions: the caller's AbortSignal (-> CANCELLED) and a silence timeout (-> LLM_TIMEOUT)
 * that a stream re-arms on every chunk (`touch`), so a stalled stream is cut after `timeoutMs` of silence. A Deadline
 * on the runtime's clock; its `signal` goes to the SDK, and `race` settles as soon as it aborts, without relying on
 * the SDK to notice.
 * @internal
 */
export function requestDeadline(outer: AbortSignal, timeoutMs: number, model: string, clock: Clock): Deadline {
  return new Deadline(clock, {
    parent: outer,
    timeoutMs,
    onTimeout: () =>
      new FlowingError('LLM_TIMEOUT', `model '${model}' sent nothing for ${timeoutMs} ms; raise timeoutMs or check the provider`, {
        details: { timeoutMs },
      }),
  });
}
