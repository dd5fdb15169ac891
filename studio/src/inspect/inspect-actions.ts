import { describeError } from '../api-error.ts';
import { runtimeClient, type RuntimeClient } from './runtime-client.ts';
import { useInspect, type RuntimeSource } from './inspect-store.ts';
import { useEditor } from '../store/editor-store.ts';
import { listNestedSessions } from './links/list-sessions.ts';

/** The client for a source (embedded or remote; the token stays in memory). */
export function clientFor(source: RuntimeSource): RuntimeClient {
  return runtimeClient(source.kind === 'remote' ? { baseUrl: source.baseUrl, token: source.token } : { baseUrl: source.baseUrl });
}

/** The client for the store's current source. */
export function currentClient(): RuntimeClient {
  return clientFor(useInspect.getState().source);
}

/** `CODE: message` of any failure, for the notice line. */
export function describeFailure(error: unknown): { code: string; message: string } {
  return describeError(error, 'STUDIO_INSPECT_FAILED');
}

/** Lists the served machines; a failure becomes the source error (e.g. no generated machine yet). */
export async function refreshMachines(): Promise<void> {
  const store = useInspect.getState();
  try {
    store.setRuntimeMachines(await currentClient().listMachines());
    store.setSourceError(null);
  } catch (error) {
    const { code, message } = describeFailure(error);
    store.setRuntimeMachines(null);
    store.setSourceError(`${code}: ${message}`);
  }
}

/** Re-reads the sessions list (newest first, children under their parents) with the status filter; true when it answered. */
export async function refreshSessions(machineId: string | undefined): Promise<boolean> {
  const store = useInspect.getState();
  try {
    const sessions = await listNestedSessions(currentClient(), {
      ...(machineId && !store.allMachines ? { machine: machineId } : {}),
      status: store.statusFilter,
      machines: store.runtimeMachines,
    });
    // Only when something changed, so the list does not re-render on every poll.
    const before = useInspect.getState().sessions;
    const same =
      before.length === sessions.length &&
      before.every((s, i) => s.sessionId === sessions[i]!.sessionId && s.version === sessions[i]!.version);
    if (!same) store.setSessions(sessions);
    if (/^RUNTIME_(UNREACHABLE|CORS_REFUSED)/.test(useInspect.getState().sourceError ?? '')) store.setSourceError(null);
    return true;
  } catch (error) {
    const { code, message } = describeFailure(error);
    store.setSourceError(`${code}: ${message}`);
    return false;
  }
}

/**
 * Selects a session from the list; a session of a machine the project has but the editor has not open opens that
 * machine first (after asking, when the open one has unsaved edits), so the session is drawn on its own graph.
 */
export async function pickSession(sessionId: string, machineId: string): Promise<void> {
  const editor = useEditor.getState();
  if (machineId !== editor.machineId && editor.machines.some((m) => m.id === machineId)) {
    if (editor.dirty && !window.confirm(`Discard unsaved changes to ${editor.machineId}?`)) return;
    await editor.openMachine(machineId);
  }
  useInspect.getState().selectSession(sessionId);
}

/** Runs one user action and records its answer: applied, refused with the runtime's code, or failed. */
export async function runAction(
  label: string,
  action: (client: RuntimeClient) => Promise<{ applied?: boolean; code?: string; message?: string } | undefined>,
): Promise<void> {
  const store = useInspect.getState();
  store.setLastAnswer(null);
  try {
    const answer = await action(currentClient());
    if (answer && answer.applied === false)
      store.setLastAnswer({ kind: 'refused', code: answer.code, message: `${label} refused: ${answer.code}: ${answer.message}` });
    else store.setLastAnswer({ kind: 'ok', message: `${label}: done` });
  } catch (error) {
    const { code, message } = describeFailure(error);
    store.setLastAnswer({ kind: 'error', code, message: `${label} failed: ${code}: ${message}` });
  }
}

/** Starts a session of the machine with the given input and selects it. */
export async function startSession(machineId: string, input: Record<string, unknown>): Promise<void> {
  await runAction('Start', async (client) => {
    const view = await client.createSession(machineId, input);
    useInspect.getState().selectSession(view.sessionId);
    await refreshSessions(machineId);
  });
}
