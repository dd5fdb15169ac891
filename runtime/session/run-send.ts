import { escapeControlCharacters } from '@flowing/spec';
import type { AnyMachineSnapshot } from 'xstate';
import type { FlowError } from '../errors.ts';
import type { RuntimeEvent, RuntimeEventType } from '../events.ts';
import type { ApprovalRecord, SessionStatus } from '../store/types.ts';
import type { ActorBridge } from './actor-bridge.ts';
import type { ApprovalWatch } from './approval-watch.ts';
import type { MachineInfo } from './machine-info.ts';
import type { RunOutcome } from './outcome.ts';
import type { Quiet } from './quiet.ts';
import { activeStates, checkEvent, checkStatus, refusalData, untakenReason, type Refusal } from './refusal.ts';
import type { RunLog } from './run-log.ts';
import type { SendResult } from './types.ts';

/** The part of a session run that applying an event from outside reads and changes. */
export interface SendingRun {
  readonly info: MachineInfo;
  readonly actor: ActorBridge;
  readonly log: RunLog;
  readonly approvals: ApprovalWatch;
  readonly quiet: Quiet;
  readonly snapshot: AnyMachineSnapshot | undefined;
  readonly failed: FlowError | undefined;
  status: SessionStatus;
  step: number;
  turnSteps: number;
  externalTurn: boolean;
  outcome?: RunOutcome;
  before: { snapshot: unknown; step: number; status: SessionStatus; approval?: ApprovalRecord };
  append(type: RuntimeEventType, data: Record<string, unknown>): RuntimeEvent;
  flush(): Promise<void>;
  applyExternal(event: { type: string }): void;
  /** Wakes the calls paused for a person (an agent's proposal just decided). */
  wakeCalls(): void;
}

/**
 * Applies one event from outside after checking it and waits until the session is quiet again. An event the
 * session cannot take (finished, unknown, a payload that breaks its schema, no transition, every guard false) is
 * refused with a code and logged as `transition.rejected`; XState alone would drop it silently.
 */
export async function sendEvent(run: SendingRun, raw: unknown): Promise<SendResult> {
  const refusal = checkStatus(run.status, run.outcome?.error);
  if (refusal) return refuseEvent(run, raw, refusal);
  const snapshot = run.snapshot;
  if (!snapshot || run.actor.stopped)
    return refuseEvent(run, raw, { code: 'SESSION_FINISHED', message: 'the session has no running machine' });
  const full = run.log.fullRefusal();
  // A full log takes nothing more, not even the record of this refusal.
  if (full) return { applied: false, ...full };
  const proposal = run.approvals.proposalFor(raw);
  if (proposal) return decideProposal(run, proposal);
  const check = checkEvent(run.info, raw);
  if (!check.ok) return refuseEvent(run, raw, check.refusal);
  const first = run.log.appended.length;
  const stepBefore = run.step;
  run.before = { snapshot: run.log.stored.snapshot, step: run.step, status: run.status, approval: run.approvals.current };
  if (run.outcome?.kind === 'reverted') run.outcome = undefined;
  run.quiet.busy();
  run.turnSteps = 0;
  run.externalTurn = true;
  try {
    return await applyEvent(run, raw, check.event, snapshot, first, stepBefore);
  } finally {
    run.externalTurn = false;
  }
}

async function applyEvent(
  run: SendingRun,
  raw: unknown,
  event: { type: string } & Record<string, unknown>,
  snapshot: AnyMachineSnapshot,
  first: number,
  stepBefore: number,
): Promise<SendResult> {
  run.applyExternal(event);
  if (run.step === stepBefore && !run.outcome && !run.actor.stopped) {
    // No transition was taken; nothing changed, so the event is refused.
    run.quiet.set();
    return refuseEvent(run, raw, untakenReason(snapshot, event.type), event);
  }
  // Decided after the transition, before any invoked call leaves XState's stack (calls start after a microtask).
  const decided = run.approvals.decide(event, snapshot);
  if (decided)
    run.append('approval.decided', {
      approvalId: decided.id,
      decision: decided.decision,
      tool: decided.tool,
      argsHash: decided.argsHash,
      reason: decided.reason ?? null,
    });
  if (!run.quiet.is && run.status !== 'running') run.quiet.set();
  await run.quiet.whenQuiet();
  await run.flush();
  const failure = run.failed;
  if (failure) {
    // A thrown message can quote event data: escaped like every refusal (see refuseEvent).
    const message = escapeControlCharacters(failure.message);
    run.append('transition.rejected', { event: event.type, states: activeStates(snapshot), code: failure.code, reason: message });
    await run.flush();
    return { applied: false, ...failure, message };
  }
  return { applied: true, state: run.snapshot?.value ?? null, status: run.status, events: run.log.appended.slice(first) };
}

/**
 * APPROVE or REJECT of a call an agent's model proposed: no transition is taken; the decision is logged and stored
 * with the session's approval, and the agent call waiting for it goes on (it runs the call, or tells the model it
 * was refused). Resolves once the session is quiet again.
 */
async function decideProposal(run: SendingRun, decided: ApprovalRecord): Promise<SendResult> {
  const first = run.log.appended.length;
  run.before = { snapshot: run.log.stored.snapshot, step: run.step, status: run.status, approval: run.approvals.current };
  run.turnSteps = 0;
  run.externalTurn = true;
  try {
    run.approvals.current = decided;
    run.append('approval.decided', {
      approvalId: decided.id,
      decision: decided.decision,
      tool: decided.tool,
      argsHash: decided.argsHash,
      callId: decided.callId,
      reason: decided.reason ?? null,
    });
    await run.flush();
    run.wakeCalls();
    await run.quiet.whenQuiet();
    await run.flush();
  } finally {
    run.externalTurn = false;
  }
  const failure = run.failed;
  if (failure) return { applied: false, ...failure };
  return { applied: true, state: run.snapshot?.value ?? null, status: run.status, events: run.log.appended.slice(first) };
}

/**
 * Records a refusal in the log and returns it. Its message can quote what the client sent (an event type), so it is
 * escaped as the CLI escapes what it prints: no control, line-separator or bidi character reaches a reader raw.
 */
export async function refuseEvent(run: SendingRun, raw: unknown, unescaped: Refusal, payload?: unknown): Promise<SendResult> {
  const refusal = { ...unescaped, message: escapeControlCharacters(unescaped.message) };
  const snapshot = run.snapshot;
  run.append('transition.rejected', refusalData(raw, refusal, snapshot && !run.actor.stopped ? activeStates(snapshot) : [], payload));
  await run.flush();
  return {
    applied: false,
    code: refusal.code,
    message: refusal.message,
    ...(refusal.details === undefined ? {} : { details: refusal.details }),
  };
}
