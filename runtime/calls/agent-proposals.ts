import { toFlowError } from '../errors.ts';
import type { AgentProposal, AgentSuspension } from '../llm/types.ts';
import { argsHash } from '../session/approvals.ts';
import type { CallContext } from './context.ts';
import { callTool } from './tool-call.ts';
import { truncateForModel } from './truncate.ts';

/**
 * An agent loop stopped for proposals, as journaled (`<call>/loop`): the provider's suspension, each proposal with its
 * own tool-call number `n` (journal key `<call>/<n>`) and its arguments with the bound ones set, and the agent's tool
 * call count so far. A resumed call continues from it without asking the model again.
 */
export interface AgentWait extends AgentSuspension {
  pending: Array<AgentProposal & { n: number }>;
  toolCalls: number;
}

/** The journal key of an agent call's latest stop for proposals. */
export function waitKey(callKey: string): string {
  return `${callKey}/loop`;
}

/**
 * Answers the proposals of a stopped agent loop, one after the other (each its own approval, with its own id): a
 * proposal asks for approval and the session waits; APPROVE runs exactly that call once through the tool wrapper
 * (the approval's argument hash, its consumption and the crash rules of every high-risk call), REJECT answers the
 * model with APPROVAL_REJECTED. A proposal whose call is journaled already is answered from the journal.
 */
export async function answerProposals(call: CallContext, wait: AgentWait, outside: Outside): Promise<Record<string, string>> {
  const answers: Record<string, string> = {};
  for (const proposal of wait.pending) answers[proposal.id] = await answerProposal(call, proposal, outside);
  return answers;
}

/** Runs a wait without the agent call's slot (a person decides meanwhile); the slot is taken back after. */
export type Outside = (wait: () => Promise<void>) => Promise<void>;

async function answerProposal(call: CallContext, proposal: AgentProposal & { n: number }, outside: Outside): Promise<string> {
  const key = `${call.key}/${proposal.n}`;
  const tool = call.tools[proposal.name]!;
  const deadline = call.deadline.child();
  const nested = call.nested(key, deadline);
  const journaled = nested.recorded() !== undefined;
  try {
    if (!journaled) {
      if (call.approval()?.callId !== key) {
        call.requestApproval({
          id: `${call.sessionId}:${key}`,
          state: call.invokeId,
          tool: proposal.name,
          args: proposal.args,
          argsHash: argsHash(proposal.args),
          callId: key,
        });
        await call.commit(true);
      }
      await outside(async () => {
        while (!call.approval()?.decision) await call.pause();
      });
    }
    const output = await callTool(nested, { tool, input: { args: proposal.args }, onUnknownOutcome: 'attention' });
    return JSON.stringify(truncateForModel(output, call.limits.maxToolResultChars)) ?? 'null';
  } catch (thrown) {
    const error = toFlowError(thrown, 'TOOL_FAILED');
    // Its state was left while the proposal waited: nobody can decide it any more (a parked run waits on, restored).
    if (deadline.isAborted && !call.runStopped) call.withdrawApproval(key);
    // A stopped session (cancelled, parked, an unknown outcome for a person) stops the agent; a failed tool is an answer.
    if (deadline.isAborted || error.code === 'CANCELLED' || error.code === 'TOOL_UNKNOWN_OUTCOME') throw thrown;
    if (error.code !== 'APPROVAL_REJECTED') return JSON.stringify({ error: { code: error.code, message: error.message } });
    // The refusal is journaled as the call's outcome: a resumed loop gives the model the same answer.
    if (!journaled) {
      const at = call.clock.now();
      nested.record({ key, kind: 'tool', name: tool.name, idempotent: false, startedAt: at, completed: { at, ok: false, error } });
      await call.commit(true);
    }
    return JSON.stringify({ error: { code: error.code, message: error.message } });
  } finally {
    deadline.dispose();
  }
}
