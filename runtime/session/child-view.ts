import { childSessionId } from '../calls/machine-call.ts';
import type { SessionRecord, SessionStore } from '../store/types.ts';
import type { MachineInfo } from './machine-info.ts';
import type { ChildWait } from './types.ts';

/** How deep `waitingOn` follows a tree of waiting children (the runtime's depth limit keeps real trees shallower). */
const MAX_VIEW_DEPTH = 16;

/**
 * The child session a waiting session's machine invoke waits on, with what the child waits for, following the tree
 * down to the session a person has to act on. Undefined when no machine call is in flight.
 */
export async function waitingChild(
  store: SessionStore,
  machine: (machineId: string) => MachineInfo,
  record: SessionRecord,
  depth = 0,
): Promise<ChildWait | undefined> {
  if (depth >= MAX_VIEW_DEPTH || (record.status !== 'waiting' && record.status !== 'running') || !record.calls) return undefined;
  let invokes: MachineInfo['invokes'];
  try {
    invokes = machine(record.machineId).invokes;
  } catch {
    return undefined; // a machine this runtime does not run: nothing to say about its calls
  }
  for (const [invokeId, key] of Object.entries(record.calls)) {
    const invoke = invokes.get(invokeId);
    if (!invoke || !('machine' in invoke)) continue;
    const child = await store.load(childSessionId(record.sessionId, key));
    if (!child) continue;
    const wait: ChildWait = { sessionId: child.sessionId, machineId: child.machineId, state: invokeId, status: child.status };
    if (child.approval) wait.approval = child.approval;
    if (child.error) wait.error = { code: child.error.code, message: child.error.message };
    const below = await waitingChild(store, machine, child, depth + 1);
    if (below) wait.waitingOn = below;
    return wait;
  }
  return undefined;
}
