import { FlowingError } from '../errors.ts';
import { freezeEvent, type RuntimeEvent } from '../events.ts';
import type { MachineInfo } from '../session/machine-info.ts';
import type { CommitRequest, JournalEntry, SessionRecord, SessionStore } from '../store/types.ts';
import type { AnyMigrationHook } from './hook.ts';
import { planContinuation, type ContinuationPlan } from './plan.ts';

/** What `session.migrated` records: both versions, the state and context the session continues with. */
export interface MigratedData {
  fromVersion: string;
  toVersion: string;
  state: unknown;
  context: unknown;
  /** Old state path to new, for the paths a migration hook renamed. */
  renamed: Record<string, string>;
  /** True when a migration hook was applied (`flowing migrate`), false for a session that fitted as it was. */
  hook: boolean;
}

/** The statuses of sessions that still take events: the ones a version change can strand. */
export const CONTINUING_STATUSES = ['running', 'waiting', 'needs_attention'] as const;

/** The plan for one stored session against the machine served now (reads its journal only when calls are in flight). */
export async function planFor(
  store: SessionStore,
  record: SessionRecord,
  info: MachineInfo,
  hook?: AnyMigrationHook,
): Promise<ContinuationPlan> {
  const journal: readonly JournalEntry[] = record.calls ? await store.readJournal(record.sessionId) : [];
  return planContinuation(record, info, journal, hook);
}

/** The SPEC_CHANGED error for a session that cannot continue, naming each reason. */
export function staleError(record: SessionRecord, plan: Extract<ContinuationPlan, { ok: false }>): FlowingError {
  return new FlowingError(
    'SPEC_CHANGED',
    `session '${record.sessionId}' was recorded under another version of '${record.machineId}' (spec hash ${plan.fromVersion.slice(0, 12)}, now ${plan.toVersion.slice(0, 12)}) and is not continued on it: ${plan.reasons.map((r) => r.message).join('; ')}${plan.hook ? '' : ". A migration hook (`migrate` in the machine's .impl.ts) applied with `flowing migrate` can carry it over"}`,
    { details: { sessionId: record.sessionId, fromVersion: plan.fromVersion, toVersion: plan.toVersion, reasons: plan.reasons } },
  );
}

/**
 * The commit that carries a session onto the current version: the record under the new spec hash with the planned
 * state value and context (an approval it waits for follows a renamed state), and one `session.migrated` event.
 */
export function migrationCommit(
  record: SessionRecord,
  plan: Extract<ContinuationPlan, { ok: true }>,
  now: number,
  fence?: number,
): { request: CommitRequest; record: SessionRecord; event: RuntimeEvent } {
  const snapshot = { ...(record.snapshot as Record<string, unknown>), value: plan.value, context: plan.context };
  const next: SessionRecord = {
    ...record,
    specHash: plan.toVersion,
    version: record.version + 1,
    seq: record.seq + 1,
    snapshot,
    updatedAt: now,
  };
  // An approval names its state by the node's own key, not by its path.
  if (record.approval) next.approval = { ...record.approval, state: renamedKey(record.approval.state, plan.renamed) };
  const data: MigratedData = {
    fromVersion: plan.fromVersion,
    toVersion: plan.toVersion,
    state: plan.value,
    context: plan.context,
    renamed: plan.renamed,
    hook: plan.hook,
  };
  const event: RuntimeEvent = freezeEvent({
    seq: next.seq,
    sessionId: record.sessionId,
    traceId: record.traceId,
    at: now,
    type: 'session.migrated',
    data: data as unknown as Record<string, unknown>,
  });
  const request: CommitRequest = {
    expectedVersion: record.version,
    record: next,
    events: [event],
    journal: [],
    ...(fence === undefined ? {} : { fence }),
  };
  return { request, record: next, event };
}

/**
 * Carries a stored session onto the machine served now when it fits (or the hook makes it fit): one commit, one
 * `session.migrated` event. Throws SPEC_CHANGED naming each reason when it does not, and writes nothing then.
 */
export async function carryOver(
  store: SessionStore,
  record: SessionRecord,
  info: MachineInfo,
  options: { now: number; fence?: number; hook?: AnyMigrationHook },
): Promise<{ record: SessionRecord; event: RuntimeEvent }> {
  const plan = await planFor(store, record, info, options.hook);
  if (!plan.ok) throw staleError(record, plan);
  const { request, record: next, event } = migrationCommit(record, plan, options.now, options.fence);
  await store.commit(request);
  return { record: next, event };
}

function renamedKey(key: string, renamed: Record<string, string>): string {
  for (const [from, to] of Object.entries(renamed)) if (from.split('.').at(-1) === key) return to.split('.').at(-1)!;
  return key;
}
