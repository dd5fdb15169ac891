import type { AnyMachineSnapshot } from 'xstate';
import type { FlowError } from '../errors.ts';
import type { RuntimeEvent, RuntimeEventType } from '../events.ts';
import type { ApprovalRecord, JournalEntry, SessionStatus } from '../store/types.ts';
import { activeNodes } from '../xstate-adapter.ts';
import type { ActorBridge, ProcessedEvent } from './actor-bridge.ts';
import type { ApprovalWatch } from './approval-watch.ts';
import type { CallLedger } from './call-ledger.ts';
import { EMPTY_LIST } from './compact.ts';
import { thrownError } from './instrument.ts';
import type { RunOutcome } from './outcome.ts';
import { activeStates } from './refusal.ts';
import { awaitingSnapshot, completionRefusal, invokeIdOf, thrownCompletionRefusal } from './unhandled.ts';

/** The `event` of the `state.changed` that logs the state a session went back to when an event was undone. */
export const REVERT_EVENT = 'flowing.revert';

/** The part of a session run the failure rules change. */
export interface FailingRun {
  status: SessionStatus;
  step: number;
  outcome?: RunOutcome;
  frozenSnapshot?: unknown;
  readonly actor: ActorBridge;
  readonly calls: CallLedger;
  readonly approvals: ApprovalWatch;
  readonly before: { snapshot: unknown; step: number; status: SessionStatus; approval?: ApprovalRecord };
  readonly log: { readonly stored: { snapshot: unknown } };
  append(type: RuntimeEventType, data: Record<string, unknown>): RuntimeEvent;
  setQuiet(): void;
}

/**
 * What a session does when something goes wrong: a throw refuses the event being applied or ends the session, a
 * call's result no branch takes and a call with an unknown outcome stop it for a person. Each rule logs what
 * happened, decides the snapshot to store, sets the outcome, and stops the actor.
 */
export class RunFailures {
  constructor(private readonly run: FailingRun) {}

  /**
   * The actor threw or failed. An invoked call's error that no onError branch takes is refused like an unhandled
   * result; a throw while an event from outside is applied refuses that event and keeps the state before it; any
   * other throw ends the session with a coded error.
   */
  actorError(thrown: unknown, cause: ProcessedEvent | undefined, applyingExternal: boolean): void {
    const snapshot = this.run.actor.snapshot;
    const recorded = this.run.actor.takeThrow();
    if (snapshot && cause?.type.startsWith('xstate.error.actor.') && cause.error === thrown) {
      this.unhandledCompletion(snapshot, cause);
      return;
    }
    const error = thrownError(
      thrown,
      recorded,
      snapshot
        ? activeNodes(snapshot)
            .filter((n) => n.type === 'atomic' || n.type === 'final')
            .map((n) => n.id)
        : [],
    );
    if (snapshot && cause && !applyingExternal && invokeIdOf(cause.type) !== undefined) {
      // A guard or action threw on a call's result: the result is kept and the session waits for a person, who can
      // deliver it again once the code is fixed (or another result, or a failure) instead of losing the session.
      this.unhandledCompletion(snapshot, cause, error);
      return;
    }
    if (applyingExternal) this.revert(error);
    else this.end(error);
  }

  /**
   * A call's result or error, or a timer, that no branch takes: XState would drop it and leave the state waiting for
   * ever. Refused (logged as `transition.rejected`) and the session stops in `needs_attention` with the call back in
   * flight, so a person can resolve it; later events are refused with SESSION_NEEDS_ATTENTION.
   */
  unhandledCompletion(snapshot: AnyMachineSnapshot, event: ProcessedEvent, thrown?: FlowError): void {
    const run = this.run;
    const invokeId = invokeIdOf(event.type);
    const callId = invokeId === undefined ? undefined : run.calls.keyOf(invokeId);
    const refusal = thrown ? thrownCompletionRefusal(snapshot, event, callId, thrown) : completionRefusal(snapshot, event, callId);
    run.append('transition.rejected', {
      event: event.type,
      states: activeStates(snapshot),
      code: refusal.code,
      reason: refusal.message,
      details: refusal.details,
    });
    run.append('error', { code: refusal.code, message: refusal.message, recoverable: true });
    run.frozenSnapshot = awaitingSnapshot(
      run.actor.persistedRaw(),
      invokeId,
      invokeId === undefined ? undefined : run.calls.inputOf(invokeId),
    );
    this.stop('needs_attention', { code: refusal.code, message: refusal.message });
  }

  /** A non-idempotent call has no recorded result: stop and wait for a person. */
  unknownOutcome(entry: JournalEntry): void {
    const run = this.run;
    if (run.actor.stopped) return;
    run.append('tool.unknown_outcome', { callId: entry.key, tool: entry.name, startedAt: entry.startedAt });
    run.frozenSnapshot = run.actor.persistedRaw();
    this.stop('needs_attention', {
      code: 'TOOL_UNKNOWN_OUTCOME',
      message: `call ${entry.key} of '${entry.name}' started but its result was never recorded; it is not idempotent, so it is not run again`,
    });
  }

  /** Ends the session in the `error` status; the snapshot kept has the error's code in place of the thrown value. */
  end(error: FlowError): void {
    const run = this.run;
    this.logError(error, false);
    const persisted = run.actor.snapshot ? run.actor.persistedRaw() : undefined;
    run.frozenSnapshot =
      persisted === undefined ? run.log.stored.snapshot : persisted.status === 'error' ? { ...persisted, error } : persisted;
    this.stop('error', error);
  }

  /** Undoes the event being applied: what the store held before it stays, and the event is refused with `error`. */
  revert(error: FlowError): void {
    const run = this.run;
    this.logError(error, true);
    const before = run.before;
    // Steps of the undone event are in the log: say where the session went back to, so a fold of the log shows it.
    const back = before.snapshot as { value?: unknown; context?: unknown } | undefined;
    if (run.step > before.step && back)
      run.append('state.changed', { state: back.value ?? null, event: REVERT_EVENT, transitions: EMPTY_LIST, context: back.context });
    this.goBack(error);
  }

  /** Stores what the store held before the event being applied, and refuses that event with `error`. */
  private goBack(error: FlowError): void {
    const run = this.run;
    const before = run.before;
    run.frozenSnapshot = before.snapshot;
    run.step = before.step;
    run.status = before.status === 'running' ? 'error' : before.status;
    run.approvals.current = before.approval;
    run.outcome = { kind: 'reverted', error };
    run.actor.stop();
    run.setQuiet();
  }

  /**
   * The log has no room for what the session did: nothing more can be logged, so nothing is. The event being applied
   * is undone (the state before it is stored, and the event refused with the error); work nobody sent (the start, a
   * timer, a resumed call) ends the session.
   */
  logFull(error: FlowError, undo: boolean): void {
    const run = this.run;
    if (run.outcome) return;
    if (undo) {
      this.goBack(error);
      return;
    }
    run.frozenSnapshot = run.actor.snapshot ? run.actor.persistedRaw() : run.log.stored.snapshot;
    this.stop('error', error);
  }

  private logError(error: FlowError, recoverable: boolean) {
    this.run.append('error', {
      code: error.code,
      message: error.message,
      recoverable,
      ...(error.details === undefined ? {} : { details: error.details }),
    });
  }

  private stop(status: SessionStatus, error: FlowError) {
    const run = this.run;
    run.status = status;
    run.outcome = { kind: 'ended', error };
    run.actor.stop();
    run.setQuiet();
  }
}
