import type { RuntimeMachine, SessionStatus, SessionSummary } from '@flowing/protocol';
import type { RuntimeClient } from '../runtime-client.ts';
import { descendantMachines, nestSessions } from './session-tree.ts';

/**
 * The sessions list with child sessions nested under their parents. Listing one machine's sessions, the sessions of
 * the machines it invokes are read too (without the status filter: a finished child of a waiting parent still shows)
 * and only the children of listed sessions kept.
 */
export async function listNestedSessions(
  client: RuntimeClient,
  query: { machine?: string; status: readonly SessionStatus[]; machines: readonly RuntimeMachine[] | null },
): Promise<SessionSummary[]> {
  const { sessions } = await client.listSessions({
    ...(query.machine ? { machine: query.machine } : {}),
    status: query.status,
    limit: 100,
  });
  const below = query.machine && sessions.length > 0 ? descendantMachines(query.machine, query.machines ?? []) : [];
  if (below.length === 0) return nestSessions(sessions);
  const pages = await Promise.all(below.map((machine) => client.listSessions({ machine, limit: 100 })));
  return nestSessions(
    sessions,
    pages.flatMap((page) => page.sessions),
  );
}
