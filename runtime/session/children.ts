import type { ChildSessions } from '../calls/context.ts';
import { FlowingError } from '../errors.ts';
import type { ParentLink, SessionRecord, SessionStatus, SessionStore } from '../store/types.ts';
import type { KeyedQueue } from './keyed-queue.ts';
import type { MachineInfo } from './machine-info.ts';
import type { RunPool } from './run-pool.ts';

/** What the child sessions of a runtime work through. */
export interface ChildParts {
  store: SessionStore;
  queue: KeyedQueue;
  /** The runtime's runs (made after the host that holds this object). */
  pool(): RunPool;
  machine(machineId: string): MachineInfo;
  newId(): string;
  cancel(sessionId: string, reason: string): Promise<unknown>;
}

const ENDED: ReadonlySet<SessionStatus> = new Set(['done', 'error', 'cancelled']);
/** How often waking a parent is tried again while another process holds its lease, and the pause between. */
const WAKE_ATTEMPTS = 20;
const WAKE_PAUSE_MS = 100;

/**
 * The runtime's side of machine calls: starts and attaches child sessions for the call running in the parent, and
 * wakes a parent whose paused call waits for a child that ended elsewhere (approved through its own id, resolved,
 * stepped by another process). Each child runs in its own turn of the keyed queue, never inside its parent's.
 */
export class ChildSessionRuns implements ChildSessions {
  /** Children a call of this process waits on right now (it reads their end itself; nobody needs waking). */
  private readonly attached = new Map<string, number>();

  constructor(private readonly parts: ChildParts) {}

  load(sessionId: string): Promise<SessionRecord | undefined> {
    return this.parts.store.load(sessionId);
  }

  start(machineId: string, input: unknown, sessionId: string, parent: ParentLink): Promise<SessionRecord> {
    const { queue } = this.parts;
    const pool = this.parts.pool();
    const info = this.parts.machine(machineId);
    return this.waitingOn(sessionId, () =>
      queue.run(sessionId, async () => {
        const run = await pool.startRun(info, { sessionId, traceId: this.parts.newId() }, { kind: 'create', input, parent });
        if (run.version > 0) return run.log.stored;
        const failed = run.failed ?? run.outcome?.error;
        throw new FlowingError(
          failed?.code ?? 'CHILD_FAILED',
          `child session ${sessionId} of '${machineId}' could not start: ${failed?.message ?? 'unknown'}`,
          {
            details: { childId: sessionId },
          },
        );
      }),
    );
  }

  attach(sessionId: string): Promise<SessionRecord> {
    const { queue } = this.parts;
    const pool = this.parts.pool();
    return this.waitingOn(sessionId, async () => {
      try {
        return await queue.run(sessionId, () =>
          pool.withRun(sessionId, true, async (run) => {
            await run.whenQuiet();
            await run.flush();
            return run.log.stored;
          }),
        );
      } catch (error) {
        // Another process steps the child now: it wakes this parent when the child ends; until then it waits.
        if (error instanceof FlowingError && error.code === 'SESSION_LEASED') {
          const record = await this.parts.store.load(sessionId);
          if (record) return record;
        }
        throw error;
      }
    });
  }

  async cancel(sessionId: string, reason: string): Promise<void> {
    try {
      await this.parts.cancel(sessionId, reason);
    } catch (error) {
      // A child the call never got to start has nothing to cancel.
      if (!(error instanceof FlowingError && error.code === 'SESSION_NOT_FOUND')) throw error;
    }
  }

  /** A session's turn ended: a child that ended while nobody here waited on it wakes its parent. */
  turnEnded(record: SessionRecord): void {
    const parent = record.parent;
    if (!parent || !ENDED.has(record.status) || this.attached.has(record.sessionId)) return;
    void this.wake(parent.sessionId);
  }

  /** Wakes a parent's paused calls in its turn and lets it run until quiet; tried again while another process holds it. */
  async wake(parentId: string): Promise<void> {
    const { queue } = this.parts;
    const pool = this.parts.pool();
    for (let attempt = 1; ; attempt++) {
      try {
        await queue.run(parentId, () =>
          pool.withRun(parentId, true, async (run) => {
            run.wakeCalls();
            await run.whenQuiet();
          }),
        );
        return;
      } catch (error) {
        const leased = error instanceof FlowingError && error.code === 'SESSION_LEASED';
        if (leased && attempt < WAKE_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, WAKE_PAUSE_MS));
          continue;
        }
        process.emitWarning(`session ${parentId} could not be woken after its child ended: ${(error as Error)?.message ?? String(error)}`, {
          code: 'FLOWING_PARENT_WAKE_FAILED',
        });
        return;
      }
    }
  }

  private async waitingOn<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    this.attached.set(sessionId, (this.attached.get(sessionId) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = this.attached.get(sessionId)! - 1;
      if (left === 0) this.attached.delete(sessionId);
      else this.attached.set(sessionId, left);
    }
  }
}
