import { FlowingError } from '../errors.ts';
import type { AgentHandoff, AgentOutput, AgentRequest } from './types.ts';

/**
 * The handoff an agent answer carries, checked against the call's declared targets: a provider (or a recording)
 * naming a target the spec does not declare is refused with HANDOFF_UNKNOWN rather than routed.
 */
export function checkedHandoff(request: AgentRequest, output: Partial<AgentOutput> | undefined): AgentHandoff | undefined {
  const handoff = output?.handoff;
  if (handoff === undefined) return undefined;
  const targets = request.handoffs ?? [];
  if (typeof handoff?.to !== 'string' || !targets.includes(handoff.to)) {
    throw new FlowingError(
      'HANDOFF_UNKNOWN',
      `the agent handed off to ${JSON.stringify(handoff?.to)?.slice(0, 80)}, which is not one of its handoffs (${targets.join(', ') || 'none'})`,
      { details: { to: handoff?.to ?? null, handoffs: [...targets] } },
    );
  }
  return {
    to: handoff.to,
    ...(typeof handoff.reason === 'string' && handoff.reason !== '' ? { reason: handoff.reason } : {}),
    message: typeof handoff.message === 'string' ? handoff.message : request.prompt,
  };
}

/**
 * What an agent call resolves with for the machine's `onDone`: `{ text, steps }`, the structured answer, or on a
 * handoff `{ text: '', steps, handoff }` (structured: `{ handoff }`).
 */
export function agentResolution(request: AgentRequest, output: AgentOutput): unknown {
  const handoff = checkedHandoff(request, output);
  // With a history, the call's new messages go along, for the machine's onDone to append.
  const messages = output.messages ? { messages: output.messages } : {};
  if (handoff) return request.output ? { handoff, ...messages } : { text: '', steps: output.steps, handoff, ...messages };
  return request.output ? { ...output.output, ...messages } : { text: output.text, steps: output.steps, ...messages };
}
