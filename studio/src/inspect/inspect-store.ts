import type { RuntimeEvent, RuntimeMachine, SessionStatus, SessionSummary } from '@flowing/protocol';
import { create } from 'zustand';

/**
 * Where sessions come from: the runtime the studio server hosts for the project (`/api/runtime`), or a remote
 * `flowing serve` with its bearer token. The token lives in this store only (memory), never in localStorage.
 */
export type RuntimeSource = { kind: 'embedded'; baseUrl: string } | { kind: 'remote'; baseUrl: string; token: string };

/** The embedded runtime's path on the studio server. */
export const EMBEDDED_SOURCE: RuntimeSource = { kind: 'embedded', baseUrl: '/api/runtime' };

/** How the live stream of the selected session is doing (shown next to the event list). */
export type StreamState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed' | 'error';

/** The answer to the last thing the user did (start, send, approve, cancel), shown under the controls. */
export type ActionAnswer = { kind: 'ok' | 'refused' | 'error'; message: string; code?: string } | null;

export interface InspectState {
  /** Which mode the studio shows: the editor or the Inspect view. */
  mode: 'edit' | 'inspect';
  source: RuntimeSource;
  /** The machines the runtime serves (null until listed). */
  runtimeMachines: RuntimeMachine[] | null;
  /** Newest first, as the runtime lists them. */
  sessions: SessionSummary[];
  /** Show only these statuses (empty: all). */
  statusFilter: SessionStatus[];
  /** List the sessions of every machine the runtime serves, not only the open machine's. */
  allMachines: boolean;
  selectedSessionId: string | null;
  /** The selected session's log in seq order, each seq once. */
  events: RuntimeEvent[];
  /** Index into `events` the views show; null follows the live end. */
  cursor: number | null;
  streamState: StreamState;
  /** Set when the source cannot be reached or refused a request: a coded message for the user. */
  sourceError: string | null;
  lastAnswer: ActionAnswer;
}

export interface InspectActions {
  setMode(mode: 'edit' | 'inspect'): void;
  setSource(source: RuntimeSource): void;
  setRuntimeMachines(machines: RuntimeMachine[] | null): void;
  setLastAnswer(answer: ActionAnswer): void;
  setSessions(sessions: SessionSummary[]): void;
  setStatusFilter(statuses: SessionStatus[]): void;
  setAllMachines(all: boolean): void;
  selectSession(sessionId: string | null): void;
  /** Replaces the log (a session opened from a file, or re-read after a reset). */
  setEvents(events: RuntimeEvent[]): void;
  /** Adds events that arrived; a seq already held is skipped, so a resumed stream never shows an event twice. */
  appendEvents(events: readonly RuntimeEvent[]): void;
  setCursor(cursor: number | null): void;
  setStreamState(state: StreamState): void;
  setSourceError(message: string | null): void;
}

/** The one Inspect-mode store: the runtime source, the sessions list, the selected session's log and the cursor. */
export const useInspect = create<InspectState & InspectActions>()((set, get) => ({
  mode: 'edit',
  source: EMBEDDED_SOURCE,
  runtimeMachines: null,
  lastAnswer: null,
  sessions: [],
  statusFilter: [],
  allMachines: false,
  selectedSessionId: null,
  events: [],
  cursor: null,
  streamState: 'idle',
  sourceError: null,

  setMode: (mode) => set({ mode }),
  setSource: (source) =>
    set({
      source,
      runtimeMachines: null,
      sessions: [],
      selectedSessionId: null,
      events: [],
      cursor: null,
      sourceError: null,
      lastAnswer: null,
    }),
  setRuntimeMachines: (runtimeMachines) => set({ runtimeMachines }),
  setLastAnswer: (lastAnswer) => set({ lastAnswer }),
  setSessions: (sessions) => set({ sessions }),
  setStatusFilter: (statusFilter) => set({ statusFilter }),
  setAllMachines: (allMachines) => set({ allMachines }),
  selectSession: (selectedSessionId) => {
    if (selectedSessionId === get().selectedSessionId) return;
    set({ selectedSessionId, events: [], cursor: null, streamState: 'idle', lastAnswer: null });
  },
  setEvents: (events) => set({ events: [...events].sort((a, b) => a.seq - b.seq), cursor: null }),
  appendEvents: (incoming) => {
    if (incoming.length === 0) return;
    const current = get().events;
    let lastSeq = current.length > 0 ? current[current.length - 1]!.seq : 0;
    const fresh: RuntimeEvent[] = [];
    for (const event of incoming) {
      if (event.seq <= lastSeq) continue;
      fresh.push(event);
      lastSeq = event.seq;
    }
    if (fresh.length > 0) set({ events: current.concat(fresh) });
  },
  setCursor: (cursor) => set({ cursor }),
  setStreamState: (streamState) => set({ streamState }),
  setSourceError: (sourceError) => set({ sourceError }),
}));

/** The index the views show: the cursor, or the last event when following the live end. */
export function viewedIndex(state: Pick<InspectState, 'events' | 'cursor'>): number {
  return state.cursor ?? state.events.length - 1;
}
