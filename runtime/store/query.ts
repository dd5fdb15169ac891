import { storeError } from './errors.ts';
import type { SessionQuery, SessionRecord, SessionStatus, SessionSummary } from './types.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

const STATUSES: readonly SessionStatus[] = ['running', 'waiting', 'done', 'error', 'cancelled', 'needs_attention'];

/** A position in the newest-first order: the last session of a page. */
export interface ListPosition {
  createdAt: number;
  sessionId: string;
}

/** A `SessionQuery` checked and made explicit. */
export interface ListPlan {
  machineId?: string;
  statuses?: ReadonlySet<SessionStatus>;
  limit: number;
  after?: ListPosition;
}

/** Checks a listing query; bad filters, page sizes and cursors are refused with a code naming the field. */
export function planList(query: SessionQuery = {}): ListPlan {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw storeError('STORE_BAD_QUERY', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${String(limit)}`);
  }
  if (query.machineId !== undefined && (typeof query.machineId !== 'string' || query.machineId.length === 0)) {
    throw storeError('STORE_BAD_QUERY', 'machineId must be a non-empty string');
  }
  let statuses: Set<SessionStatus> | undefined;
  if (query.status !== undefined) {
    const list = typeof query.status === 'string' ? [query.status] : [...query.status];
    for (const status of list) {
      if (!STATUSES.includes(status))
        throw storeError('STORE_BAD_QUERY', `status '${String(status)}' is not one of ${STATUSES.join(', ')}`);
    }
    statuses = new Set(list);
  }
  return {
    limit,
    ...(query.machineId === undefined ? {} : { machineId: query.machineId }),
    ...(statuses ? { statuses } : {}),
    ...(query.cursor === undefined ? {} : { after: decodeCursor(query.cursor) }),
  };
}

/** The opaque cursor that continues after `position`. */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.sessionId]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): ListPosition {
  let parsed: unknown;
  try {
    parsed =
      typeof cursor === 'string' && cursor.length <= 1_000 ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isFinite(parsed[0]) || typeof parsed[1] !== 'string') {
    throw storeError('STORE_BAD_CURSOR', 'the cursor was not produced by this store; list again without a cursor');
  }
  return { createdAt: parsed[0] as number, sessionId: parsed[1] as string };
}

/** Newest first: `createdAt` descending, then `sessionId` descending. */
export function newestFirst(a: ListPosition, b: ListPosition): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
}

/** Whether `position` comes after the cursor's position in the newest-first order. */
export function isAfter(position: ListPosition, after: ListPosition | undefined): boolean {
  return after === undefined || newestFirst(after, position) < 0;
}

/** Whether a session passes the plan's filters. */
export function matches(plan: ListPlan, machineId: string, status: SessionStatus): boolean {
  return (plan.machineId === undefined || plan.machineId === machineId) && (plan.statuses === undefined || plan.statuses.has(status));
}

/** The listing line of a stored record. */
export function summarize(record: SessionRecord): SessionSummary {
  return {
    sessionId: record.sessionId,
    machineId: record.machineId,
    status: record.status,
    version: record.version,
    seq: record.seq,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    awaitingApproval: record.approval !== undefined && record.approval.decision === undefined,
    ...(record.parent ? { parentId: record.parent.sessionId } : {}),
  };
}
