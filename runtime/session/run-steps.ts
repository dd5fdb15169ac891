import type { AnyMachineSnapshot } from 'xstate';
import { contextChange } from '@flowing/protocol';
import { toFlowError } from '../errors.ts';
import type { RuntimeEvent, RuntimeEventType } from '../events.ts';
import type { ResolvedLimits } from '../limits.ts';
import type { SessionStatus } from '../store/types.ts';
import type { TakenTransition } from '../xstate-adapter.ts';
import type { ActorBridge, ProcessedEvent } from './actor-bridge.ts';
import type { ApprovalWatch } from './approval-watch.ts';
import { EMPTY_LIST, sharedValue } from './compact.ts';
import type { MachineInfo } from './machine-info.ts';
import type { RunOutcome } from './outcome.ts';
import type { Quiet } from './quiet.ts';
import type { RunFailures } from './run-failures.ts';
import type { RunLog } from './run-log.ts';
import { isCompletionEvent } from './unhandled.ts';

/** The part of a session run that recording a step reads and changes. */
export interface SteppingRun {
  readonly info: MachineInfo;
  readonly host: { readonly limits: ResolvedLimits };
  readonly actor: ActorBridge;
  readonly log: RunLog;
  readonly approvals: ApprovalWatch;
  readonly quiet: Quiet;
  status: SessionStatus;
  step: number;
  /** Steps since the turn began (an event from outside, or the session's start, a restore or a timer wake-up). */
  turnSteps: number;
  /** True while the turn is an event from outside, which a step limit refuses instead of ending the session. */
  externalTurn: boolean;
  outcome?: RunOutcome;
  append(type: RuntimeEventType, data: Record<string, unknown>): RuntimeEvent;
}

/**
 * Turns each macrostep of a session's actor into its log: one `state.changed` per step that took a transition (with
 * the context when it changed), the approval asked for on entering an approval state, the step limit, and the
 * status the session settles in.
 */
export class RunSteps {
  private lastContext: unknown;
  private lastStatus?: string;

  constructor(
    private readonly run: SteppingRun,
    private readonly failures: RunFailures,
  ) {}

  /** A stored snapshot was restored: what it holds is the starting point, not a step. */
  restored(snapshot: AnyMachineSnapshot): void {
    this.lastContext = snapshot.context;
    this.lastStatus = snapshot.status;
    this.run.approvals.restored();
  }

  step(snapshot: AnyMachineSnapshot, cause: ProcessedEvent, transitions: TakenTransition[]): void {
    const run = this.run;
    if (transitions.length === 0 && snapshot.status === 'active' && isCompletionEvent(cause.type)) {
      this.failures.unhandledCompletion(snapshot, cause);
      return;
    }
    if (transitions.length === 0 && snapshot.status === this.lastStatus && cause.type !== 'xstate.init') return; // nothing was taken
    this.lastStatus = snapshot.status;
    run.step++;
    if (++run.turnSteps > this.stepsPerTurn) {
      this.stepLimit(cause);
      return;
    }
    const data: Record<string, unknown> = {
      state: sharedValue(run.info, snapshot.value),
      event: cause.type,
      transitions: transitions.length === 0 ? EMPTY_LIST : transitions,
    };
    // Events from outside are logged whole, so a session can be replayed from its log.
    if (!cause.type.startsWith('xstate.')) data.payload = cause;
    const change = contextChange(this.lastContext, snapshot.context);
    this.lastContext = snapshot.context;
    if (change) Object.assign(data, change);
    run.append('state.changed', data);
    this.watchApprovals(snapshot);
    this.settle(snapshot);
  }

  private get stepsPerTurn(): number {
    return this.run.info.definition.limits?.stepsPerTurn ?? this.run.host.limits.stepsPerTurn;
  }

  /**
   * The turn took more steps than allowed: an event from outside is refused and the session goes back to the state
   * it had before it, so one runaway turn costs the session nothing but that event. A turn nobody sent (the start,
   * a timer) has no state to go back to and ends the session.
   */
  private stepLimit(cause: ProcessedEvent): void {
    const limit = this.stepsPerTurn;
    const error = {
      code: 'STEP_LIMIT',
      message: `the session took more than ${limit} steps since the last event from outside (at ${cause.type}); limits.stepsPerTurn is ${limit}`,
      details: { stepsPerTurn: limit },
    };
    if (this.run.externalTurn) this.failures.revert(error);
    else this.failures.end(error);
  }

  /** Logs the approval asked for when the session just entered an approval state. */
  watchApprovals(snapshot: AnyMachineSnapshot): void {
    const request = this.run.approvals.entered(snapshot, this.run.step);
    if (request)
      this.run.append('approval.requested', {
        approvalId: request.id,
        state: request.state,
        tool: request.tool,
        args: request.args,
        argsHash: request.argsHash,
      });
  }

  /** The status the session settles in after a step; quiet unless a call is still running. */
  settle(snapshot: AnyMachineSnapshot): void {
    const run = this.run;
    run.actor.trackTimers();
    if (snapshot.status === 'done') {
      run.status = 'done';
      run.append('session.done', { state: snapshot.value, output: snapshot.output ?? null });
    } else if (snapshot.status === 'error') {
      const error = toFlowError(snapshot.error, 'TOOL_FAILED');
      run.status = 'error';
      run.outcome = { kind: 'ended', error };
      run.append('error', { code: error.code, message: error.message, recoverable: false });
    } else if (snapshot.status === 'active') {
      // A state waiting for its `after` timer is waiting too: the runtime wakes the session up when it is due.
      run.status = run.actor.callRunning ? 'running' : 'waiting';
    }
    run.log.scheduleCommit();
    if (run.status !== 'running') run.quiet.set();
  }
}
