import { FlowingError, toFlowError } from '../errors.ts';
import type { RunAdmission } from '../limits.ts';
import type { SessionStore } from '../store/types.ts';
import { waitingChild } from './child-view.ts';
import type { DamagedSessions } from './damaged.ts';
import type { KeyedQueue } from './keyed-queue.ts';
import type { MachineInfo } from './machine-info.ts';
import type { RunPool } from './run-pool.ts';
import { checkEventId } from './event-ids.ts';
import type { Subscriptions } from './subscriptions.ts';
import type { SendOptions, SendResult, Session, SessionSnapshot } from './types.ts';

/** What a session handle works through: the runtime's queue, runs, store, admission and subscriptions. */
export interface HandleParts {
  store: SessionStore;
  queue: KeyedQueue;
  pool: RunPool;
  admission: RunAdmission;
  subscriptions: Subscriptions;
  damaged: DamagedSessions;
  machine(machineId: string): MachineInfo;
}

/**
 * Applies an event in the session's turn. An APPROVE or REJECT for a session that has no approval of its own but
 * waits on a child session goes to that child (and on down the tree); the parent then continues with the child's
 * end, in the same turn.
 */
function deliver(
  parts: HandleParts,
  sessionId: string,
  event: { type: string },
  eventId: string | undefined,
  via: SendOptions['via'],
): Promise<SendResult> {
  const { queue, pool } = parts;
  return queue.run(sessionId, () =>
    pool.withRun(sessionId, true, async (run) => {
      await run.whenQuiet();
      const childId = run.forwardTarget(event);
      if (childId === undefined) {
        if (eventId === undefined) {
          const result = await run.send(event);
          if (via && result.applied) await run.noteReceived(via);
          return result;
        }
        const result = await run.sendOnce(event, eventId, via && (() => run.logReceived(via)));
        // A repeat is noted when the note of its first application was lost (the process died between its two commits).
        if (via && result.applied && result.duplicate && !(await run.noted(via.messageId))) await run.noteReceived(via);
        return result;
      }
      // The event id goes along: the child refuses a repeat of it as this session would.
      const result = await deliver(parts, childId, event, eventId, via);
      run.wakeCalls();
      await run.whenQuiet();
      return { ...result, forwardedTo: result.forwardedTo ?? childId };
    }),
  );
}

/** A handle on one session; holding it costs nothing in the runtime. */
export function sessionHandle<TEvent extends { type: string }>(parts: HandleParts, sessionId: string, machineId: string): Session<TEvent> {
  const { store, queue, pool, admission, subscriptions, damaged } = parts;
  return {
    id: sessionId,
    machineId,
    send(event, sendOptions = {}) {
      const { eventId, via } = sendOptions;
      const badId = eventId === undefined ? undefined : checkEventId(eventId);
      if (badId) return Promise.resolve({ applied: false as const, ...badId });
      // A log found damaged is not written on: nothing could read the session whole again.
      const corrupt = damaged.refusal(sessionId);
      if (corrupt) return Promise.resolve({ applied: false as const, ...corrupt });
      if (sendOptions.queue === false && queue.has(sessionId)) {
        const current = pool.current(sessionId);
        const refusal = { code: 'BUSY', message: 'another event of this session is being applied; retry later or send with queue: true' };
        if (current) return current.then((run) => run.refuse(event, refusal));
        return queue.run(sessionId, () => pool.withRun(sessionId, false, (run) => run.refuse(event, refusal)));
      }
      const admitted = admission.enter();
      if ('refusal' in admitted) return Promise.resolve({ applied: false as const, ...admitted.refusal });
      return deliver(parts, sessionId, event, eventId, via).finally(admitted.leave);
    },
    async snapshot() {
      const current = pool.current(sessionId);
      if (current) await (await current).flush();
      const record = await store.load(sessionId);
      if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${store.name} store`);
      const snapshot = (record.snapshot ?? {}) as { value?: unknown; context?: unknown };
      const view: SessionSnapshot = {
        sessionId,
        machineId: record.machineId,
        specHash: record.specHash,
        traceId: record.traceId,
        status: record.status,
        state: snapshot.value ?? null,
        context: snapshot.context ?? null,
        seq: record.seq,
        step: record.step,
        version: record.version,
        usage: record.usage,
      };
      if (record.approval) view.approval = record.approval;
      if (record.error) view.error = record.error;
      if (record.fork) view.fork = { parentId: record.fork.parentId, forkedAt: record.fork.forkedAt };
      if (record.parent) view.invokedBy = record.parent;
      const waitingOn = await waitingChild(store, parts.machine, record);
      if (waitingOn) view.waitingOn = waitingOn;
      return view;
    },
    events(fromSeq = 0) {
      return store.readEvents(sessionId, fromSeq).catch((error: unknown) => {
        damaged.note(sessionId, toFlowError(error, 'STORE_UNAVAILABLE'));
        throw error;
      });
    },
    subscribe(fromSeq, listener, onError) {
      const stop = subscriptions.subscribe(sessionId, fromSeq, listener, onError);
      // A store shared between processes also feeds what the others commit; repeats of local deliveries are dropped by seq.
      const unfollow = store.follow?.(sessionId, fromSeq, (events) => subscriptions.deliver(sessionId, events));
      return () => {
        stop();
        unfollow?.();
      };
    },
    async cancel(reason = 'cancelled by the caller') {
      for (;;) {
        const current = pool.current(sessionId);
        if (current) return (await current).cancel(reason);
        if (!pool.waitingForLease(sessionId) && !queue.has(sessionId)) break;
        // An operation (createSession, send) was queued a moment ago and opens its run soon; queueing behind it
        // instead would wait until that run is quiet, which a call that never returns makes never.
        await pool.settledOpen(sessionId);
      }
      return queue.run(sessionId, () => pool.withRun(sessionId, false, (run) => run.cancel(reason)));
    },
  };
}
