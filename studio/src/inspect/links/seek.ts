import type { RuntimeEvent } from '@flowing/protocol';
import { useEffect } from 'react';
import { create } from 'zustand';
import { currentClient, describeFailure, pickSession } from '../inspect-actions.ts';
import { useInspect } from '../inspect-store.ts';
import { indexAtTime } from './child-runs.ts';

/** Which event of a session to show once it is open: the one at a time of another session, or one channel message. */
export type SeekMatch = { kind: 'time'; at: number } | { kind: 'message'; type: 'channel.sent' | 'channel.received'; messageId: string };

interface SeekState {
  /** The session being opened and the event to move its cursor to once its log is read; null when none. */
  target: { sessionId: string; match: SeekMatch } | null;
  /**
   * The machine of each session opened through a link: such a session may be missing from the sessions list (another
   * machine's, on a runtime whose machines the project lacks), and is still drawn on its own machine's graph.
   */
  machines: Readonly<Record<string, string>>;
  set(target: SeekState['target']): void;
  noteMachine(sessionId: string, machineId: string): void;
}

/** The one pending "open that session at that event" of the Inspect mode. */
export const useSeek = create<SeekState>()((set, get) => ({
  target: null,
  machines: {},
  set: (target) => set({ target }),
  noteMachine: (sessionId, machineId) => {
    if (get().machines[sessionId] !== machineId) set({ machines: { ...get().machines, [sessionId]: machineId } });
  },
}));

/**
 * Opens another session (a child, the other end of a channel message) in the inspector with its cursor on `match`.
 * The session's machine comes from `machineId` or, when the caller does not know it, from `GET /sessions/:id`.
 */
export async function openSessionAt(sessionId: string, machineId: string | undefined, match: SeekMatch): Promise<void> {
  useSeek.getState().set({ sessionId, match });
  try {
    const machine = machineId ?? (await currentClient().getSession(sessionId)).machineId;
    useSeek.getState().noteMachine(sessionId, machine);
    await pickSession(sessionId, machine);
  } catch (error) {
    const { code, message } = describeFailure(error);
    useSeek.getState().set(null);
    useInspect.getState().setLastAnswer({ kind: 'error', code, message: `Open ${sessionId} failed: ${code}: ${message}` });
  }
}

/** The index `match` points at in `events`; undefined while the events read so far cannot tell yet. */
function resolve(events: readonly RuntimeEvent[], match: SeekMatch, complete: boolean): number | undefined {
  if (match.kind === 'message') {
    const index = events.findIndex((e) => e.type === match.type && (e.data as { messageId?: unknown }).messageId === match.messageId);
    return index >= 0 ? index : complete ? events.length - 1 : undefined;
  }
  const later = events.length > 0 && events[events.length - 1]!.at > match.at;
  return later || complete ? indexAtTime(events, match.at) : undefined;
}

/** Moves the cursor of a session opened by `openSessionAt` to its event once enough of its log has arrived. */
export function useSeekOnLoad(): void {
  const target = useSeek((s) => s.target);
  const selected = useInspect((s) => s.selectedSessionId);
  const events = useInspect((s) => s.events);
  const streamState = useInspect((s) => s.streamState);
  useEffect(() => {
    if (!target || target.sessionId !== selected || events.length === 0) return;
    // The stored log is read before the stream opens: once it is open (or closed, for a finished session) it is all here.
    const index = resolve(events, target.match, streamState === 'open' || streamState === 'closed');
    if (index === undefined) return;
    useSeek.getState().set(null);
    useInspect.getState().setCursor(index);
  }, [target, selected, events, streamState]);
}
