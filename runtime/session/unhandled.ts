import type { AnyMachineSnapshot } from 'xstate';
import { toFlowError, type FlowError } from '../errors.ts';
import { activeStates, untakenReason, type Refusal } from './refusal.ts';

const DONE = 'xstate.done.actor.';
const ERROR = 'xstate.error.actor.';
const AFTER = 'xstate.after.';

/**
 * True for the machine's own completion events: an invoked call's done or error, a delayed (`after`) transition.
 * Unlike an event from outside, nobody is there to be refused when one of these takes no transition, and the state
 * that waited for it waits forever.
 */
export function isCompletionEvent(type: string): boolean {
  return type.startsWith(DONE) || type.startsWith(ERROR) || type.startsWith(AFTER);
}

/** The invoke id of a done/error event, or undefined for other events. */
export function invokeIdOf(type: string): string | undefined {
  if (type.startsWith(DONE)) return type.slice(DONE.length);
  if (type.startsWith(ERROR)) return type.slice(ERROR.length);
  return undefined;
}

/**
 * The refusal of a completion event that took no transition: GUARD_REJECTED when the state has branches for it and
 * every guard was false, NO_TRANSITION when it has none. The details carry what the branches saw.
 */
export function completionRefusal(
  snapshot: AnyMachineSnapshot,
  event: { type: string } & Record<string, unknown>,
  callId: string | undefined,
): Refusal {
  const base = untakenReason(snapshot, event.type);
  const states = activeStates(snapshot).join(', ');
  const invokeId = invokeIdOf(event.type);
  const details: Record<string, unknown> = { event: event.type, states: activeStates(snapshot) };
  if (callId !== undefined) details.callId = callId;
  let what: string;
  if (event.type.startsWith(DONE)) {
    details.output = event.output ?? null;
    what = `the result of '${invokeId}' matches no onDone branch`;
  } else if (event.type.startsWith(ERROR)) {
    const error = toFlowError(event.error, 'TOOL_FAILED');
    details.error = error;
    what = `the error ${error.code} of '${invokeId}' matches no onError branch`;
  } else {
    what = `the delayed transition ${event.type.slice(AFTER.length)} matches no branch`;
  }
  const why = base.code === 'GUARD_REJECTED' ? 'every guard was false' : 'the state has none';
  return {
    code: base.code,
    message: `${what} in ${states} (${why}); the session waits for a person (needs_attention): resolve the call or cancel the session`,
    details,
  };
}

/**
 * The refusal of a call's result or error on which a guard or action threw (GUARD_THREW, ACTION_THREW,
 * MACHINE_THREW with the thrown message): the session waits for a person like for a result no branch takes.
 */
export function thrownCompletionRefusal(
  snapshot: AnyMachineSnapshot,
  event: { type: string } & Record<string, unknown>,
  callId: string | undefined,
  thrown: FlowError,
): Refusal {
  const details: Record<string, unknown> = { event: event.type, states: activeStates(snapshot), error: thrown };
  if (callId !== undefined) details.callId = callId;
  if (event.type.startsWith(DONE)) details.output = event.output ?? null;
  return {
    code: thrown.code,
    message: `${thrown.message} (while taking the ${event.type.startsWith(DONE) ? 'result' : 'error'} of '${invokeIdOf(event.type)}' in ${activeStates(snapshot).join(', ')}); the session waits for a person (needs_attention): fix the code and resolve the call, or cancel the session`,
    details,
  };
}

/**
 * The persisted snapshot to keep for a session stopped on an unhandled completion: still active, with the call
 * that completed back in flight (with its input), so a resume asks the journal for its result again and a person
 * who resolves the call (a different result, or a failure) is heard by the machine.
 */
export function awaitingSnapshot(
  persisted: Record<string, unknown>,
  invokeId: string | undefined,
  input: unknown,
): Record<string, unknown> {
  const snapshot: Record<string, unknown> = { ...persisted, status: 'active', error: undefined };
  const children = persisted.children as Record<string, { snapshot?: Record<string, unknown> }> | undefined;
  const child = invokeId === undefined ? undefined : children?.[invokeId];
  if (child && input !== undefined) {
    snapshot.children = {
      ...children,
      [invokeId!]: { ...child, snapshot: { status: 'active', output: undefined, error: undefined, input } },
    };
  }
  return snapshot;
}
