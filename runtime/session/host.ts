import type { InspectionEvent } from 'xstate';
import type { ChildSessions } from '../calls/context.ts';
import type { CallDirectory } from '../calls/directory.ts';
import type { Clock } from '../clock.ts';
import type { CrashPoints } from '../crash-points.ts';
import type { RuntimeEvent } from '../events.ts';
import type { ResolvedLimits, Semaphore } from '../limits.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { SessionRecord, SessionStore } from '../store/types.ts';
import type { AnyMigrationHook } from '../migrate/hook.ts';
import type { ThrowRecorder } from './instrument.ts';
import type { MachineInfo } from './machine-info.ts';

/** Which session an XState inspection event comes from, and where in its log: after the event with seq `afterSeq`. */
export interface InspectionSource {
  sessionId: string;
  machineId: string;
  afterSeq: number;
}

/** Hears XState's own inspection events (actors, events, microsteps, snapshots) of every session's actor system. */
export type XStateInspector = (event: InspectionEvent, source: InspectionSource) => void;

/** What a live session run needs from its runtime. */
export interface RunHost {
  store: SessionStore;
  llm: LlmProvider;
  clock: Clock;
  /** The clock as XState takes it (made once per runtime). */
  xstateClock: { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(id: unknown): void };
  limits: ResolvedLimits;
  /** The limit on calls in flight. */
  calls: Semaphore;
  /** How invoked actors find their session. */
  directory: CallDirectory;
  crashPoint: CrashPoints;
  machine(machineId: string): MachineInfo;
  /** Where the coded throws of a machine's guards and actions are recorded. */
  throwsOf(info: MachineInfo): ThrowRecorder;
  /** Hands committed events to subscribers. */
  deliver(sessionId: string, events: readonly RuntimeEvent[]): void;
  /** Routes the channel messages a session emitted (`channel.sent`, committed) to their receivers. */
  sendMessages?(sessionId: string, sent: readonly RuntimeEvent[]): void;
  /**
   * The receiving session of a message on `channel` with `key`; undefined when nobody listens to it; empty when the
   * receiver is not known here but may be in another process (the store carries the message, the receiver routes it).
   */
  channelTarget?(channel: string, key: string): { machine?: string; sessionId?: string } | undefined;
  /** Random number in [0, 1) for backoff jitter (injectable for tests). */
  random(): number;
  /** The runtime's sessions as a machine call reaches them (its child sessions). */
  children: ChildSessions;
  /** A run's turn ended (quiet and committed): a finished child session wakes the parent waiting for it. */
  onTurnEnd?(record: SessionRecord): void;
  /** Hears every record a run committed (the runtime arms the session's timer wake-up from it). */
  onCommitted?(record: SessionRecord): void;
  /** XState's inspection events of every session, with where they happened (the runtime's `inspect` option). */
  inspect?: XStateInspector;
  /** A piece of work on the session is over and committed: it is quiet until its next event (the tracer's turn ends). */
  onQuiet?(sessionId: string): void;
  /** The migration hook of a machine (the runtime's `migrations` option), applied when a session of an older version opens. */
  migrations?(machineId: string): AnyMigrationHook | undefined;
}
