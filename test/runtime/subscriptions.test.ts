import { describe, expect, it } from 'vitest';
import { FlowingError, type FlowError } from '../../runtime/errors.ts';
import type { RuntimeEvent } from '../../runtime/events.ts';
import { Subscriptions } from '../../runtime/session/subscriptions.ts';

/**
 * The subscriptions module alone, with a store read the test answers by hand: every read waits until the test
 * resolves it (with a slice of the log, possibly stale) or rejects it, so each interleaving is spelled out.
 */

const SESSION = 's1';

function event(seq: number): RuntimeEvent {
  return Object.freeze({ seq, sessionId: SESSION, traceId: 't1', at: 0, type: 'state.changed', data: Object.freeze({}) });
}

function events(...seqs: number[]): RuntimeEvent[] {
  return seqs.map(event);
}

interface PendingRead {
  afterSeq: number;
  /** Answers with the log after `afterSeq` as it stood when it ended at `lastSeq` (a stale snapshot if the log is longer). */
  snapshotUpTo(lastSeq: number): void;
  fail(error: unknown): void;
}

function harness() {
  const reads: PendingRead[] = [];
  const subscriptions = new Subscriptions((sessionId, afterSeq) => {
    expect(sessionId).toBe(SESSION);
    return new Promise<readonly RuntimeEvent[]>((resolve, reject) => {
      reads.push({
        afterSeq,
        snapshotUpTo: (lastSeq) => resolve(events(...Array.from({ length: Math.max(0, lastSeq - afterSeq) }, (_, i) => afterSeq + i + 1))),
        fail: reject,
      });
    });
  });
  const subscribe = (fromSeq: number) => {
    const seen: number[] = [];
    const errors: FlowError[] = [];
    const stop = subscriptions.subscribe(
      SESSION,
      fromSeq,
      (e) => seen.push(e.seq),
      (error) => errors.push(error),
    );
    return { seen, errors, stop };
  };
  const deliver = (...seqs: number[]) => subscriptions.deliver(SESSION, events(...seqs));
  /** The read issued last, which must still be unanswered. */
  const lastRead = () => {
    const read = reads.at(-1);
    if (!read) throw new Error('no read was issued');
    return read;
  };
  return { reads, subscribe, deliver, lastRead };
}

/** Lets the subscriptions module run everything an answered read made ready (no timers involved). */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Subscriptions: catch-up reads merged with live delivery', () => {
  it('reads again instead of jumping from N to N+2 when the catch-up read after a live gap returns a snapshot ending at N', async () => {
    const { reads, subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    lastRead().snapshotUpTo(2);
    await drain();
    expect(sub.seen).toEqual([1, 2]);

    deliver(4); // a local commit overtakes 3, which another process committed and the feed has not brought yet
    expect(lastRead().afterSeq).toBe(2);
    lastRead().snapshotUpTo(2); // the read was taken before 3 was in the store
    await drain();
    expect(sub.seen).toEqual([1, 2]);

    expect(reads).toHaveLength(3);
    expect(lastRead().afterSeq).toBe(2);
    lastRead().snapshotUpTo(4);
    await drain();
    deliver(3); // the feed finally brings 3
    deliver(5);
    expect(sub.seen).toEqual([1, 2, 3, 4, 5]);
  });

  it('does not skip N+1 when N+2 arrives live during the first catch-up read and that read returns a snapshot ending at N', async () => {
    const { subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    deliver(3);
    lastRead().snapshotUpTo(1);
    await drain();
    expect(sub.seen).toEqual([1]);

    expect(lastRead().afterSeq).toBe(1);
    lastRead().snapshotUpTo(3);
    await drain();
    deliver(4);
    expect(sub.seen).toEqual([1, 2, 3, 4]);
  });

  it('keeps reading while successive catch-up reads stay stale, and delivers once the missing event is stored', async () => {
    const { reads, subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    deliver(2);
    for (let i = 0; i < 3; i++) {
      lastRead().snapshotUpTo(0);
      await drain();
      expect(sub.seen).toEqual([]);
    }
    expect(reads.map((r) => r.afterSeq)).toEqual([0, 0, 0, 0]);
    lastRead().snapshotUpTo(1);
    await drain();
    expect(sub.seen).toEqual([1, 2]);
  });

  it('delivers events that arrived out of order during a catch-up read in seq order, without reading again', async () => {
    const { reads, subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    deliver(3);
    deliver(2);
    lastRead().snapshotUpTo(1);
    await drain();
    expect(sub.seen).toEqual([1, 2, 3]);
    expect(reads).toHaveLength(1);
  });

  it('drops live events the catch-up read already delivered, then delivers later events live at once', async () => {
    const { reads, subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    deliver(1);
    deliver(2);
    lastRead().snapshotUpTo(2);
    await drain();
    expect(sub.seen).toEqual([1, 2]);

    deliver(3);
    expect(sub.seen).toEqual([1, 2, 3]);
    expect(reads).toHaveLength(1);
  });

  it('ignores live repeats of delivered events (a feed trailing local commits) without reading the store', async () => {
    const { reads, subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    lastRead().snapshotUpTo(2);
    await drain();

    deliver(1, 2);
    deliver(2, 3);
    deliver(3);
    deliver(4);
    expect(sub.seen).toEqual([1, 2, 3, 4]);
    expect(reads).toHaveLength(1);
  });

  it('delivers 1..N exactly once, in order, to each subscriber when their catch-up reads resolve in reverse order', async () => {
    const { reads, subscribe, deliver } = harness();
    const a = subscribe(0);
    const b = subscribe(1);
    const c = subscribe(0);
    const [readA, readB, readC] = reads;
    deliver(2);
    deliver(4, 5); // 3 comes only from the store
    readC!.snapshotUpTo(2);
    await drain();
    readB!.snapshotUpTo(5);
    await drain();
    deliver(3, 4, 5, 6);
    readA!.snapshotUpTo(3);
    await drain();
    // c's read ended at 2 while 4 and 5 were buffered: it must read 3 before going on.
    const cRead = reads.find((r) => r !== readA && r !== readB && r !== readC && r.afterSeq === 2);
    expect(cRead).toBeDefined();
    cRead!.snapshotUpTo(6);
    await drain();
    deliver(7);

    expect(a.seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(b.seen).toEqual([2, 3, 4, 5, 6, 7]);
    expect(c.seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('reports a failed first catch-up read to onError with code SUBSCRIPTION_FAILED and the cause, and delivers nothing more', async () => {
    const { reads, subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    deliver(1);
    lastRead().fail(new FlowingError('STORE_UNAVAILABLE', 'connection refused'));
    await drain();
    expect(sub.errors).toHaveLength(1);
    expect(sub.errors[0]!.code).toBe('SUBSCRIPTION_FAILED');
    expect(sub.errors[0]!.message).toContain('STORE_UNAVAILABLE: connection refused');
    expect(sub.errors[0]!.message).toContain('subscribe again from seq 0');

    deliver(2);
    expect(sub.seen).toEqual([]);
    expect(reads).toHaveLength(1);
  });

  it('reports a failed read after a live gap to onError with the last delivered seq, instead of waiting for ever', async () => {
    const { reads, subscribe, deliver, lastRead } = harness();
    const sub = subscribe(0);
    lastRead().snapshotUpTo(2);
    await drain();
    deliver(4);
    lastRead().fail(new Error('disk I/O error'));
    await drain();
    expect(sub.errors).toEqual([expect.objectContaining({ code: 'SUBSCRIPTION_FAILED' })]);
    expect(sub.errors[0]!.message).toContain('subscribe again from seq 2');

    deliver(3, 4, 5);
    expect(sub.seen).toEqual([1, 2]);
    expect(reads).toHaveLength(2);
  });

  it('stays silent when a read fails after the subscriber unsubscribed', async () => {
    const { subscribe, lastRead } = harness();
    const sub = subscribe(0);
    sub.stop();
    lastRead().fail(new Error('gone'));
    await drain();
    expect(sub.errors).toEqual([]);
    expect(sub.seen).toEqual([]);
  });
});

/**
 * A log the test appends to (as a commit does: stored, then delivered), read by pages of three, and a listener that
 * takes each event only when the test lets it.
 */
function pacedHarness(stored = 0) {
  const log: RuntimeEvent[] = events(...Array.from({ length: stored }, (_, i) => i + 1));
  const readsAfter: number[] = [];
  const subscriptions = new Subscriptions(
    async (_sessionId, afterSeq, limit) => {
      readsAfter.push(afterSeq);
      return log.filter((e) => e.seq > afterSeq).slice(0, limit);
    },
    () => {},
    3,
  );
  const seen: number[] = [];
  let release: (() => void) | undefined;
  const waiting = () => release !== undefined;
  subscriptions.subscribe(SESSION, 0, (e) => {
    seen.push(e.seq);
    return new Promise<void>((resolve) => (release = resolve));
  });
  const take = async () => {
    const next = release;
    release = undefined;
    next?.();
    await drain();
  };
  const commit = (count: number) => {
    const added = events(...Array.from({ length: count }, (_, i) => log.length + i + 1));
    log.push(...added);
    subscriptions.deliver(SESSION, added);
  };
  return { log, readsAfter, seen, waiting, take, commit };
}

describe('Subscriptions: a listener that returns a promise paces its catch-up', () => {
  it('hands over the next stored event, and reads the next page, only once the listener took the previous one', async () => {
    const { readsAfter, seen, waiting, take } = pacedHarness(5);
    await drain();
    expect(seen).toEqual([1]);
    await drain();
    expect(seen).toEqual([1]);
    await take();
    await take();
    expect(seen).toEqual([1, 2, 3]);
    expect(readsAfter).toEqual([0]);
    await take();
    expect(readsAfter).toEqual([0, 3]);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(waiting()).toBe(true);
  });

  it('keeps at most a page of live events while the listener is slow, then reads the rest from the store, each once and in order', async () => {
    const { readsAfter, seen, take, commit } = pacedHarness();
    commit(2);
    await drain();
    expect(seen).toEqual([1]);
    commit(20); // far more than a page arrives while the listener holds event 1
    for (let i = 0; i < 40 && seen.length < 22; i++) await take();
    expect(seen).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    // The dropped events were read back from the store page by page.
    expect(readsAfter.length).toBeGreaterThan(5);
    await take();
    commit(1); // caught up: a new commit goes straight to the listener
    expect(seen.at(-1)).toBe(23);
  });
});
