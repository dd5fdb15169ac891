import type { RuntimeEvent } from '../events.ts';
import type { SessionRecord } from '../store/types.ts';
import type { MachineInfo } from './machine-info.ts';
import type { Refusal } from './refusal.ts';

/** Log entries read per page while looking for a session's finished child sessions. */
const PAGE = 500;

/** What looking at a parent's finished children needs of its run. */
export interface ParentRun {
  readonly sessionId: string;
  /** Whether the session's own machine invokes other machines. */
  readonly invokesMachines: boolean;
  readEvents(afterSeq: number, limit: number): Promise<readonly RuntimeEvent[]>;
}

/** Whether a machine invokes other machines (only then can an approval have gone to a child). */
export function invokesMachines(info: Pick<MachineInfo, 'invokes'>): boolean {
  for (const invoke of info.invokes.values()) if ('machine' in invoke) return true;
  return false;
}

/**
 * Where an APPROVE or REJECT goes that a parent neither takes itself nor can forward (no child waits): the child
 * that got the same event id before, which answers it as the duplicate it is; or a refusal that the approval of its
 * last child with one was already decided, naming that child. Undefined when the parent never had such a child (the
 * event is then refused as any event the session does not take).
 */
export async function decidedChild(
  run: ParentRun,
  load: (sessionId: string) => Promise<SessionRecord | undefined>,
  event: unknown,
  eventId: string | undefined,
): Promise<{ childId: string } | { refusal: Refusal } | undefined> {
  // Not yet checked: anything a caller sends gets here, and is refused by the session's own check when it is not an approval.
  const type = typeof event === 'object' && event !== null ? (event as { type?: unknown }).type : undefined;
  if ((type !== 'APPROVE' && type !== 'REJECT') || !run.invokesMachines) return undefined;
  const children = (await finishedChildren(run)).reverse();
  let decided: SessionRecord | undefined;
  for (const childId of children) {
    const child = await load(childId);
    if (!child) continue;
    if (eventId !== undefined && child.eventIds?.some((entry) => entry.id === eventId)) return { childId };
    if (!decided && child.approval?.decision) decided = child;
  }
  if (!decided) return undefined;
  const approval = decided.approval!;
  return {
    refusal: {
      code: 'APPROVAL_ALREADY_DECIDED',
      message: `session ${run.sessionId} waits on no child session: the approval of its child ${decided.sessionId} (machine '${decided.machineId}', state '${approval.state}', tool '${approval.tool}') was already ${approval.decision}; ${type} is not applied`,
      details: { childId: decided.sessionId, machineId: decided.machineId, approvalId: approval.id, decision: approval.decision },
    },
  };
}

/** The child sessions a session's machine calls ended, in the order they ended (read from its log). */
async function finishedChildren(run: ParentRun): Promise<string[]> {
  const ids: string[] = [];
  for (let after = 0; ; ) {
    const page = await run.readEvents(after, PAGE);
    for (const entry of page) {
      const childId = (entry.data as { childId?: unknown } | undefined)?.childId;
      if ((entry.type === 'machine.done' || entry.type === 'machine.failed') && typeof childId === 'string' && !ids.includes(childId))
        ids.push(childId);
    }
    if (page.length < PAGE) return ids;
    after = page.at(-1)!.seq;
  }
}
