import type { InspectionEvent } from 'xstate';
import type { Clock } from '../clock.ts';
import type { RuntimeEvent } from '../events.ts';
import type { ResolvedLimits, Semaphore } from '../limits.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { SessionRecord, SessionStore } from '../store/types.ts';
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
  limits: ResolvedLimits;
  calls: Semaphore;
  machine(machineId: string): MachineInfo;
  /** Hands committed events to subscribers. */
  deliver(sessionId: string, events: readonly RuntimeEvent[]): void;
  /** Random number in [0, 1) for backoff jitter (injectable for tests). */
  random(): number;
  /** Hears every record a run committed (the runtime arms the session's timer wake-up from it). */
  onCommitted?(record: SessionRecord): void;
  /** XState's inspection events of every session, with where they happened (the runtime's `inspect` option). */
  inspect?: XStateInspector;
}
