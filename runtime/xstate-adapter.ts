/**
 * Every use of XState's internals (members starting with `_`, and the system's scheduler) is in this file, for
 * xstate 5.33.3. `test/runtime/xstate-adapter.test.ts` runs `checkXStateInternals()` against the installed xstate
 * and fails naming the symbol if an upgrade removes or changes one of them.
 */
import {
  createActor,
  createMachine,
  type Actor,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyStateNode,
  type InspectionEvent,
} from 'xstate';

/** One transition taken in a microstep: the event, the source state id and the target state ids. */
export interface TakenTransition {
  event: string;
  source: string;
  targets: string[];
}

/** A delayed event waiting in the actor system's scheduler. */
export interface ScheduledEvent {
  id: string;
  source: unknown;
  target: unknown;
  event: { type: string };
  delay: number;
  startedAt: number;
}

/** The active state nodes of a snapshot (`snapshot._nodes`). */
export function activeNodes(snapshot: AnyMachineSnapshot): readonly AnyStateNode[] {
  return (snapshot as unknown as { _nodes: AnyStateNode[] })._nodes;
}

/** The state nodes a state value (with this context) resolves to in a machine, without running anything. */
export function resolveNodes(machine: AnyStateMachine, value: unknown, context: unknown): readonly AnyStateNode[] {
  return activeNodes(machine.resolveState({ value: value as never, context: context as never }) as AnyMachineSnapshot);
}

/** The transitions of a `@xstate.microstep` inspection event (`event._transitions`). */
export function microstepTransitions(event: InspectionEvent): TakenTransition[] {
  const transitions =
    (event as { _transitions?: Array<{ eventType: string; source: { id: string }; target?: Array<{ id: string }> }> })._transitions ?? [];
  return transitions.map((t) => ({ event: t.eventType, source: t.source.id, targets: t.target?.map((n) => n.id) ?? [] }));
}

/**
 * Makes the actor's system hand only the root actor's inspection events to `listener`, as they are. A public
 * inspector makes XState copy every event of every actor (`{ ...event, rootId }`, some 66 a session, most of them
 * the invoked calls' own) only to have all but the root's dropped; the system's entry point
 * (`system._sendInspectionEvent`, which every actor calls) is replaced instead. Falls back to the public inspector
 * (and answers false) when that entry point is missing.
 */
export function hearRootOnly(actor: Actor<AnyStateMachine>, listener: (event: InspectionEvent) => void): boolean {
  const system = actor.system as unknown as { _sendInspectionEvent?: (event: InspectionEvent) => void };
  if (typeof system._sendInspectionEvent !== 'function') {
    actor.system.inspect(listener);
    return false;
  }
  system._sendInspectionEvent = (event) => {
    if (event.actorRef === actor) listener(event);
  };
  return true;
}

/** The delayed events the actor's system has scheduled (`system.getSnapshot()._scheduledEvents`). */
export function scheduledEvents(actor: Actor<AnyStateMachine>): Readonly<Record<string, ScheduledEvent>> {
  return (actor.system.getSnapshot() as unknown as { _scheduledEvents: Record<string, ScheduledEvent> })._scheduledEvents;
}

/** Schedules `{ type }` to the actor itself after `delay` ms, under the id `type` (as XState schedules `after`). */
export function scheduleOwnEvent(actor: Actor<AnyStateMachine>, type: string, delay: number): void {
  scheduler(actor).schedule(actor, actor, { type }, delay, type);
}

/** Cancels a delayed event the actor scheduled under `id`. */
export function cancelOwnEvent(actor: Actor<AnyStateMachine>, id: string): void {
  scheduler(actor).cancel(actor, id);
}

interface Scheduler {
  schedule(source: unknown, target: unknown, event: { type: string }, delay: number, id: string): void;
  cancel(source: unknown, id: string): void;
}

function scheduler(actor: Actor<AnyStateMachine>): Scheduler {
  return (actor.system as unknown as { scheduler: Scheduler }).scheduler;
}

/**
 * Checks each internal this file relies on against the installed xstate; returns one line per symbol that is
 * missing or changed shape (empty when all is well).
 */
export function checkXStateInternals(): string[] {
  const problems: string[] = [];
  const machine = createMachine({ id: 'probe', initial: 'a', states: { a: { on: { GO: 'b' }, after: { 1000: 'b' } }, b: {} } });
  const inspected: InspectionEvent[] = [];
  const actor = createActor(machine, { inspect: (event) => inspected.push(event) });
  const system = actor.system as unknown as Record<string, unknown>;
  if (typeof system._sendInspectionEvent !== 'function') problems.push('system._sendInspectionEvent is not a function');
  const sched = system.scheduler as Record<string, unknown> | undefined;
  if (typeof sched?.schedule !== 'function' || typeof sched?.cancel !== 'function')
    problems.push('system.scheduler.schedule/cancel are not functions');
  actor.start();
  const nodes = (actor.getSnapshot() as unknown as { _nodes?: unknown })._nodes;
  if (!Array.isArray(nodes) || !nodes.some((n: { key?: string }) => n.key === 'a'))
    problems.push('snapshot._nodes does not list the active state nodes');
  const scheduled = Object.values(
    (actor.system.getSnapshot() as unknown as { _scheduledEvents?: Record<string, ScheduledEvent> })._scheduledEvents ?? {},
  );
  const timer = scheduled.find((e) => e.event?.type === 'xstate.after.1000.probe.a');
  if (!timer || timer.id !== timer.event.type || timer.source !== actor || typeof timer.startedAt !== 'number' || timer.delay !== 1000) {
    problems.push('system.getSnapshot()._scheduledEvents does not hold the after timer as { id, source, target, event, delay, startedAt }');
  }
  actor.send({ type: 'GO' });
  const micro = inspected.find((e) => e.type === '@xstate.microstep' && e.actorRef === actor);
  const taken = micro ? microstepTransitions(micro) : [];
  if (taken.length !== 1 || taken[0]!.event !== 'GO' || taken[0]!.source !== 'probe.a' || taken[0]!.targets[0] !== 'probe.b') {
    problems.push('the @xstate.microstep inspection event has no _transitions with eventType, source.id and target[].id');
  }
  actor.stop();
  return problems;
}
