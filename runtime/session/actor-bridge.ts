import { createActor, type Actor, type AnyMachineSnapshot, type AnyStateMachine, type InspectionEvent } from 'xstate';
import type { CallDirectory, CallSite } from '../calls/directory.ts';
import type { Clock } from '../clock.ts';
import { hearRootOnly, microstepTransitions, type TakenTransition } from '../xstate-adapter.ts';
import type { InspectionSource, XStateInspector } from './host.ts';
import type { ThrowRecorder } from './instrument.ts';
import { TimerTracker, type TimerDeadlines } from './timers.ts';

/** An event as the root actor processes it. */
export type ProcessedEvent = { type: string } & Record<string, unknown>;

/** What the bridge reports to its session. */
export interface ActorBridgeListener {
  /** A macrostep ended in `snapshot`, caused by `cause`, taking `transitions` (none when nothing was taken). */
  onStep(snapshot: AnyMachineSnapshot, cause: ProcessedEvent, transitions: TakenTransition[]): void;
  /** A snapshot while a stored snapshot is restored (no step is taken then). */
  onRestored(snapshot: AnyMachineSnapshot): void;
  /** The actor threw or failed, while processing `cause`. */
  onActorError(thrown: unknown, cause: ProcessedEvent | undefined): void;
  /** The machine emitted a channel message (an `emit` of the spec). */
  onEmit(message: { channel?: unknown; key?: unknown; data?: unknown }): void;
}

export interface ActorBridgeOptions {
  machine: AnyStateMachine;
  throws: ThrowRecorder;
  clock: Clock;
  xstateClock: { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(id: unknown): void };
  directory: CallDirectory;
  calls: CallSite;
  /** The runtime's `inspect` option, with where each event happened. */
  inspect?: { inspector: XStateInspector; source: () => InspectionSource };
}

/**
 * One session's XState actor: starts it fresh or from a stored snapshot, hears its root's inspection events (each
 * macrostep with the transitions taken), keeps its `after` timers, and stops it. Reports upward through its listener.
 */
export class ActorBridge {
  private actor?: Actor<AnyStateMachine>;
  private stoppedFlag = false;
  private restoringFlag = false;
  private microsteps: TakenTransition[] = [];
  /** The event the root actor processes now (XState reports a throw without it). */
  private current?: ProcessedEvent;
  private inspectorFailed = false;
  private timerTracker?: TimerTracker;
  private persistedOf?: unknown;
  private persistedValue?: unknown;

  constructor(
    private readonly options: ActorBridgeOptions,
    private readonly listener: ActorBridgeListener,
  ) {}

  /** Starts the actor with `input`, or restored from `snapshot` with its stored timer deadlines. */
  start(from: { input?: unknown } | { snapshot: unknown; timers?: TimerDeadlines }): void {
    const { options } = this;
    const restoring = 'snapshot' in from;
    const actor = createActor(options.machine, {
      ...(restoring ? { snapshot: from.snapshot as never } : { input: from.input }),
      ...(options.inspect ? { inspect: (event: InspectionEvent) => this.onInspect(event) } : {}),
      clock: options.xstateClock,
    });
    this.actor = actor;
    this.timerTracker = new TimerTracker(actor, options.clock);
    if (!options.inspect) hearRootOnly(actor, (event) => this.onInspect(event));
    options.directory.register(actor.system, options.calls);
    actor.on('flowing.channel', (message) => this.listener.onEmit(message as { channel?: unknown; key?: unknown; data?: unknown }));
    // Without an error observer XState rethrows the actor's errors globally; with it, they end the session here.
    actor.subscribe({ error: (thrown) => this.onError(thrown) });
    this.restoringFlag = restoring;
    try {
      actor.start();
    } finally {
      this.restoringFlag = false;
    }
    if (!restoring || this.stoppedFlag) return;
    // Restoring runs no entry actions, so `after` timers are scheduled again here with the time they had left.
    this.timerTracker.rearm(from.timers);
  }

  get snapshot(): AnyMachineSnapshot | undefined {
    return this.actor?.getSnapshot() as AnyMachineSnapshot | undefined;
  }

  /** True while a stored snapshot is being restored. */
  get restoring(): boolean {
    return this.restoringFlag;
  }

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  /** True when the actor runs (started and not stopped). */
  get live(): boolean {
    return this.actor !== undefined && !this.stoppedFlag;
  }

  /**
   * True while an invoked call is still running (a finished one stays among the children until its state is left;
   * a paused one waits outside the session).
   */
  get callRunning(): boolean {
    const children = this.actor?.getSnapshot().children as Record<string, { getSnapshot(): { status: string } } | undefined> | undefined;
    for (const id in children) if (children[id]?.getSnapshot().status === 'active' && !this.options.calls.isPaused(id)) return true;
    return false;
  }

  /** Sends an event to the root actor; a throw it causes reaches the listener's `error` synchronously. */
  send(event: { type: string }): void {
    this.options.throws.take(); // a throw recorded elsewhere and never reported is not this event's
    this.actor!.send(event);
  }

  /** The recorded coded throw behind the error being reported now. */
  takeThrow() {
    return this.options.throws.take();
  }

  /** The actor's persisted snapshot as XState makes it. */
  persistedRaw(): Record<string, unknown> {
    return this.actor!.getPersistedSnapshot() as Record<string, unknown>;
  }

  /** The persisted snapshot through `compact`, recomputed only when the actor's snapshot changed since the last call. */
  persisted(compact: (persisted: Record<string, unknown>) => unknown): unknown {
    const current = this.actor!.getSnapshot();
    if (current !== this.persistedOf) {
      this.persistedOf = current;
      this.persistedValue = compact(this.persistedRaw());
    }
    return this.persistedValue;
  }

  /** Notes the deadlines of timers scheduled by the last step. */
  trackTimers(): void {
    this.timerTracker?.track();
  }

  /** The deadlines of the pending `after` timers, for the stored record. */
  timerDeadlines(): TimerDeadlines | undefined {
    return this.live ? this.timerTracker!.deadlines() : undefined;
  }

  /** Delivers the delayed transitions that are due now. */
  fireDueTimers(deadlines: TimerDeadlines | undefined): void {
    if (this.live) this.timerTracker!.fireDue(deadlines);
  }

  /**
   * Stops the actor. Stopping from inside XState's own processing (an inspection callback) is deferred to keep its
   * state consistent.
   */
  stop(): void {
    if (this.stoppedFlag) return;
    this.stoppedFlag = true;
    const actor = this.actor;
    if (actor)
      queueMicrotask(() => {
        actor.stop();
        this.options.directory.unregister(actor.system);
      });
  }

  private onInspect(event: InspectionEvent) {
    const inspect = this.options.inspect;
    if (inspect && !this.inspectorFailed) this.forward(inspect.inspector, inspect.source, event);
    if (event.actorRef !== this.actor || this.stoppedFlag) return;
    if (event.type === '@xstate.event') {
      this.current = event.event as ProcessedEvent;
    } else if (event.type === '@xstate.microstep') {
      for (const taken of microstepTransitions(event)) this.microsteps.push(taken);
    } else if (event.type === '@xstate.snapshot') {
      const snapshot = event.snapshot as AnyMachineSnapshot;
      if (this.restoringFlag) return this.listener.onRestored(snapshot);
      const transitions = this.microsteps;
      this.microsteps = [];
      this.listener.onStep(snapshot, event.event as ProcessedEvent, transitions);
    }
  }

  /**
   * Hands an inspection event to the runtime's `inspect` option. An inspector that throws never reaches the session:
   * it is reported once (a process warning, code FLOWING_INSPECTOR_THREW) and hears nothing more from this run.
   */
  private forward(inspector: XStateInspector, source: () => InspectionSource, event: InspectionEvent) {
    try {
      inspector(event, source());
    } catch (error) {
      this.inspectorFailed = true;
      process.emitWarning(
        `the inspect option threw on ${event.type} of session ${source().sessionId} and hears nothing more from it: ${(error as Error)?.message ?? String(error)}`,
        { code: 'FLOWING_INSPECTOR_THREW' },
      );
    }
  }

  private onError(thrown: unknown) {
    if (this.stoppedFlag) return;
    this.listener.onActorError(thrown, this.current);
  }
}
