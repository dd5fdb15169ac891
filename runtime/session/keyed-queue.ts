/**
 * Serialises operations per key (a session id): each waits for the one before it of the same key. Counts the
 * operations queued or running per key, which is what BUSY is decided on (not on the queue's cleanup).
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly counts = new Map<string, number>();
  private readonly idleWaiters = new Map<string, Array<() => void>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(fn).finally(() => {
      const left = this.counts.get(key)! - 1;
      if (left > 0) return void this.counts.set(key, left);
      this.counts.delete(key);
      const waiters = this.idleWaiters.get(key);
      this.idleWaiters.delete(key);
      for (const wake of waiters ?? []) wake();
    });
    const tail = next.then(
      () => {},
      () => {},
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** True while an operation of this key is queued or running. */
  has(key: string): boolean {
    return this.counts.has(key);
  }

  /** Resolves when no operation of this key is queued or running. */
  whenIdle(key: string): Promise<void> {
    if (!this.counts.has(key)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.idleWaiters.get(key);
      if (list) list.push(resolve);
      else this.idleWaiters.set(key, [resolve]);
    });
  }
}
