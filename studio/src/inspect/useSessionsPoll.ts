import { useEffect } from 'react';
import { refreshMachines, refreshSessions } from './inspect-actions.ts';
import { useInspect } from './inspect-store.ts';

/** How often the sessions list is re-read while the Inspect mode is open. */
export const SESSIONS_POLL_MS = 1_000;

/**
 * Keeps the sessions list live by polling `GET /sessions` (the runtime has no feed of all sessions; one request a
 * second is cheap on loopback and works the same against a remote server). Lists the served machines on start.
 */
export function useSessionsPoll(machineId: string | undefined): void {
  const source = useInspect((s) => s.source);
  const statusFilter = useInspect((s) => s.statusFilter);
  const allMachines = useInspect((s) => s.allMachines);
  // refreshSessions reads the source and the filter from the store; a change of either restarts the poll, so that the
  // list is read again at once rather than at the next tick.
  // biome-ignore lint/correctness/useExhaustiveDependencies: source, statusFilter and allMachines are triggers, read from the store by refreshSessions
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      if (useInspect.getState().runtimeMachines === null) await refreshMachines();
      await refreshSessions(machineId);
      if (!stopped) timer = setTimeout(() => void tick(), SESSIONS_POLL_MS);
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [machineId, source, statusFilter, allMachines]);
}
